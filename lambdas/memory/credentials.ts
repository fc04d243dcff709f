import { decodedTexts, labelled, readable, unwrapped, type ViewLine } from './credential-views';

/**
 * Content refused as a credential. Memories are shared with every connected AI client and exported
 * in bulk, so secrets must not land in them. Each rule is a pattern of a well-known token shape;
 * the ones that would also match ordinary text (AWS secret keys, password assignments) require a
 * naming context on the same line. A finding names the kind and the line, never the value.
 *
 * The stored text is scanned as written and in the views a reader or a decoder makes of it
 * (`credential-views.ts`: invisible characters out, wrapped tokens joined, a secret named on the line
 * before, encodings decoded), and the front matter also as YAML decodes it: an escape (`"\x41KIA…"`,
 * `"\u0041…"`, an escaped line break inside a token) must not carry a credential past the scan and
 * into the decoded JSON view (`content.ts`). The rule set follows the map of secret scanners
 * (gitleaks): a shape per well-known token, context for the generic ones.
 *
 * Rules (documented in README.md):
 *   aws-access-key-id     AKIA/ASIA/… + 16 upper-case letters or digits
 *   aws-secret-access-key 40 base64 characters after a key naming an AWS secret (aws_secret_access_key, SecretAccessKey, …)
 *   private-key           a `BEGIN … PRIVATE KEY` header however many dashes (or none, alone on its line), any case,
 *                         or a PKCS#1/PKCS#8/SEC1/OpenSSH key body by its base64 prefix (public keys and certificates pass)
 *   google-api-key        AIza + 35 characters
 *   npm-token             npm_ + 36 letters and digits
 *   basic-auth            an `Authorization: Basic <base64>` header
 *   connection-string     a URL with a password in it (`postgres://user:pw@host`; placeholders pass)
 *   github-token          ghp_/gho_/ghu_/ghs_/ghr_ + 36+ characters, or github_pat_…
 *   gitlab-token          glpat-/gldt-/glrt-… + 20+ characters
 *   slack-token           xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xapp-…, or a hooks.slack.com webhook URL
 *   stripe-secret-key     sk_live_/sk_test_/rk_live_/rk_test_ + 16+ characters (publishable pk_ keys pass)
 *   openai-api-key        sk-… / sk-proj-… / sk-svcacct-… / sk-ant-… with 32+ token characters mixing letters and digits
 *   personal-access-token this service's own personal access tokens: mcpm_pat_ + 12 + _ + 38 base62 characters
 *   jwt                   three base64url parts whose first two start with `eyJ` (a JSON object), also split
 *                         across lines at its dots
 *   password-assignment   password/passwd/pwd/passphrase/secret/api_key/access_token-like key, then `=` and a
 *                         literal value of 4+ characters; or, as a YAML/JSON key at the start of a line, `:` and a
 *                         one-token value with a digit or a symbol; or inline JSON `"password": "…"` anywhere
 *                         on a line. Placeholders (PLACEHOLDER) and code (`getPassword()`, `process.env.X`,
 *                         `==`) pass.
 */
export interface CredentialFinding {
  kind: CredentialKind;
  /** 1-based line of the first finding. */
  line: number;
  /** For a finding in a decoded front-matter value: its key (top-level name, or the nearest one). */
  key?: string;
}

export type CredentialKind =
  | 'aws-access-key-id'
  | 'aws-secret-access-key'
  | 'private-key'
  | 'github-token'
  | 'gitlab-token'
  | 'slack-token'
  | 'stripe-secret-key'
  | 'openai-api-key'
  | 'personal-access-token'
  | 'jwt'
  | 'google-api-key'
  | 'npm-token'
  | 'basic-auth'
  | 'connection-string'
  | 'password-assignment';

export const CREDENTIAL_LABELS: Record<CredentialKind, string> = {
  'aws-access-key-id': 'an AWS access key ID',
  'aws-secret-access-key': 'an AWS secret access key',
  'private-key': 'a private key block',
  'github-token': 'a GitHub token',
  'gitlab-token': 'a GitLab token',
  'slack-token': 'a Slack token or webhook',
  'stripe-secret-key': 'a Stripe secret key',
  'openai-api-key': 'an OpenAI-style API key',
  'personal-access-token': 'a personal access token of this service',
  jwt: 'a JSON Web Token',
  'google-api-key': 'a Google API key',
  'npm-token': 'an npm access token',
  'basic-auth': 'an HTTP Basic authorization header',
  'connection-string': 'a connection string with a password',
  'password-assignment': 'a password or secret assignment',
};

interface RuleSpec {
  kind: CredentialKind;
  pattern: RegExp;
  /** Extra check on the match, for shapes that need more than a pattern. */
  accept?: (m: RegExpExecArray) => boolean;
}

const hasLetterAndDigit = (s: string): boolean => /[A-Za-z]/.test(s) && /\d/.test(s);

const PLACEHOLDER =
  /^(<.*>|\$\{.*\}|\$[A-Z_][A-Z0-9_]*|\{\{.*\}\}|%.*%|\*+|x+|X+|\.\.\.|…|null|none|nil|true|false|undefined|redacted|\[redacted\]|example|your[-_ ]?\w*|\(.*\)|required|optional|string|secret|password|change[-_]?me|replace[-_]?me|placeholder|dummy|todo|tbd|await|new|yield|typeof|require|import|function|lambda|self|this)$/i;

const SECRET_KEY =
  '(?:password|passwd|passphrase|pwd|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key|secret[_-]?key)';

interface Rule extends RuleSpec {
  global: RegExp;
}

const SPECS: RuleSpec[] = [
  // The header however many dashes (or none, alone on its line), and the bodies of PKCS#1, PKCS#8,
  // SEC1 and OpenSSH private keys by their fixed base64 prefixes (a key pasted without its header).
  { kind: 'private-key', pattern: /(?:-{2,}\s*|^\s*)BEGIN[ \t]+(?:[A-Z0-9]+[ \t]+)*PRIVATE[ \t]+KEY(?:[ \t]+BLOCK)?(?:\s*-{2,}|\s*$)/i },
  {
    kind: 'private-key',
    pattern:
      /(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{1,3}IBAAKC[A-Za-z0-9+/]{16}|MII[A-Za-z0-9+/]{1,3}IBADANBgkqhkiG9w0BAQEFAASC|MIG[A-Za-z0-9+/]{1,2}AgEAMBMGByqGSM49AgE|MHcCAQEEI[A-Za-z0-9+/]{16}|b3BlbnNzaC1rZXktdjE)/,
  },
  { kind: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/ },
  { kind: 'npm-token', pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/ },
  {
    kind: 'basic-auth',
    pattern: /authorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})/i,
    accept: (m) => Buffer.from(m[1], 'base64').toString('utf8').includes(':'),
  },
  {
    kind: 'connection-string',
    // scheme://user:password@host; the password part is what must not be a placeholder.
    pattern: /(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:@/'"`]{1,64}:([^\s@/'"`]{3,128})@[A-Za-z0-9.[\]-]+/i,
    accept: (m) => !PLACEHOLDER.test(m[1]) && !/^(?:\$|%|<|\{|\*+$)/.test(m[1]),
  },
  { kind: 'aws-access-key-id', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])/ },
  {
    kind: 'aws-secret-access-key',
    pattern: /aws.{0,20}?(?:secret|sk).{0,20}?[=:]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/i,
    accept: (m) => /[A-Z]/.test(m[1]) && /[a-z]/.test(m[1]) && /\d/.test(m[1]),
  },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})/ },
  { kind: 'gitlab-token', pattern: /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|cbt|soat)-[A-Za-z0-9_-]{20,}/ },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9])(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}/ },
  { kind: 'slack-token', pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{20,}/ },
  { kind: 'stripe-secret-key', pattern: /(?<![A-Za-z0-9])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/ },
  {
    kind: 'openai-api-key',
    pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-(?:api\d\d-|admin\d\d-)?)?([A-Za-z0-9_-]{32,})/,
    accept: (m) => hasLetterAndDigit(m[1]),
  },
  { kind: 'personal-access-token', pattern: /(?<![A-Za-z0-9_])mcpm_pat_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}(?![A-Za-z0-9])/ },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/ },
  {
    kind: 'password-assignment',
    // Quoted, anything up to the closing quote; bare, the value must end cleanly:
    // `password=getPassword()` or `password == other` is code, not a secret.
    pattern: new RegExp(`(?<![A-Za-z0-9])${SECRET_KEY}["']?\\s*=\\s*(?:(["'])([^"'\\n]{4,})\\1|([^\\s"'\`;,&=()\\[\\]{}<>]{4,})(?=[\\s"'\`;,&]|$))`, 'i'),
    accept: (m) => {
      const value = m[2] ?? m[3];
      return !PLACEHOLDER.test(value) && !/^(?:process\.env|os\.environ|env\.|config\.|settings\.)/i.test(value);
    },
  },
  {
    kind: 'password-assignment',
    // The `:` form only as a key alone at the start of a line (YAML, JSON), and only with a value
    // that looks generated (a digit or a symbol): `Password: see the vault` is prose.
    pattern: new RegExp(`^\\s*(?:[-*]\\s+)?["']?[A-Za-z0-9_.-]*${SECRET_KEY}["']?\\s*:\\s*(["']?)([^\\s"'\`,]{4,})\\1\\s*(?:,\\s*)?$`, 'i'),
    accept: (m) => !PLACEHOLDER.test(m[2]) && (/\d/.test(m[2]) || /[^A-Za-z0-9_-]/.test(m[2])),
  },
  {
    kind: 'password-assignment',
    // Inline JSON anywhere on a line: `{"user": "a", "password": "…"}`.
    pattern: new RegExp(`"[A-Za-z0-9_.-]*${SECRET_KEY}"\\s*:\\s*"([^"\\n]{4,})"`, 'i'),
    accept: (m) => !PLACEHOLDER.test(m[1]) && (/\d/.test(m[1]) || /[^A-Za-z0-9_ -]/.test(m[1])),
  },
];

/** A JWT broken over lines at its dots (wrapped output, a YAML folded scalar). */
const SPLIT_JWT =
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}[ \t]*\r?\n?[ \t]*\.[ \t]*\r?\n?[ \t]*eyJ[A-Za-z0-9_-]{8,}[ \t]*\r?\n?[ \t]*\.[ \t]*\r?\n?[ \t]*[A-Za-z0-9_-]{16,}/;

const RULES: Rule[] = SPECS.map((r) => ({ ...r, global: new RegExp(r.pattern.source, `${r.pattern.flags}g`) }));

/**
 * What every rule needs somewhere on the line (a token prefix, a key word, `://`): a line without
 * any is skipped by one or two tests instead of every rule. Keep in step with SPECS.
 */
const NEEDED =
  /A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA|SCA)|AIza|npm_|mcpm_pat_|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|ft|cbt|soat)-|xox[abprs]-|xapp-|hooks\.slack\.com|[sr]k_(?:live|test)_|sk-|eyJ|MI[IG]|MHcCAQEEI|b3BlbnNzaC1rZXktdjE|:\/\//;
const NEEDED_WORDS = /begin|authori[sz]ation|aws|pass|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|private[_-]?key/i;

/** The first credential on one line, or undefined. */
function scanLine(line: string): CredentialKind | undefined {
  if (line.length < 8 || !(NEEDED.test(line) || NEEDED_WORDS.test(line))) return undefined;
  for (const rule of RULES) {
    if (!rule.accept) {
      if (rule.pattern.test(line)) return rule.kind;
      continue;
    }
    // Every match, not just the first: a near miss must not hide a real secret later on the line.
    for (const m of line.matchAll(rule.global)) {
      if (rule.accept(m as RegExpExecArray)) return rule.kind;
    }
  }
  return undefined;
}

/** The first credential on the lines of a view (each with the line of the note it comes from). */
function scanView(lines: readonly ViewLine[]): CredentialFinding | undefined {
  for (const { text, line } of lines) {
    const kind = scanLine(text);
    if (kind) return { kind, line };
  }
  return undefined;
}

/** The text as written only, no view: the scan before views existed (the benchmark's baseline). */
export function scanText(text: string): CredentialFinding | undefined {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const kind = scanLine(lines[i]);
    if (kind) return { kind, line: i + 1 };
  }
  return splitJwt(text);
}

function splitJwt(text: string): CredentialFinding | undefined {
  const split = SPLIT_JWT.exec(text);
  return split ? { kind: 'jwt', line: text.slice(0, split.index).split('\n').length } : undefined;
}

/** How many encodings deep a credential is looked for (base64 of hex of a token: two). */
const MAX_DEPTH = 2;

/**
 * The first credential found in `text`, or undefined: in the text as written, then as a reader sees
 * it (invisible characters removed, compatibility forms folded), with wrapped tokens joined, with a
 * secret named on the line before its value, and decoded from the encodings found in it (each
 * decoded text scanned the same way, `MAX_DEPTH` deep). Findings cite the line of `text`.
 */
export function findCredential(text: string, depth = 0): CredentialFinding | undefined {
  const direct = scanText(text);
  if (direct) return direct;
  const seen = readable(text);
  if (seen !== undefined) {
    const found = scanView(seen.changed) ?? splitJwt(seen.text);
    if (found) return found;
  }
  const plain = seen?.text ?? text;
  const joined = unwrapped(plain);
  const found = (joined && scanView(joined)) || scanView(labelled(plain) ?? []);
  if (found) return found;
  if (depth >= MAX_DEPTH) return undefined;
  const lines = plain.split('\n');
  const decodeAt = (line: string, at: number): CredentialFinding | undefined => {
    for (const decoded of decodedTexts(line)) {
      const inner = findCredential(decoded, depth + 1);
      if (inner) return { kind: inner.kind, line: at };
    }
    return undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const inner = decodeAt(lines[i], i + 1);
    if (inner) return inner;
  }
  for (const { text: line, line: at } of joined ?? []) {
    const inner = decodeAt(line, at);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * The first credential among decoded front-matter values: every string, alone and after its key
 * (`password: …` needs the key as context), at any depth. The finding names the key.
 */
export function findCredentialInValues(frontmatter: unknown, key = ''): CredentialFinding | undefined {
  if (typeof frontmatter === 'string') {
    const f =
      findCredential(frontmatter) ?? (key ? findCredential(`${key}: ${frontmatter.includes('\n') ? JSON.stringify(frontmatter) : frontmatter}`) : undefined);
    return f && { ...f, key };
  }
  if (Array.isArray(frontmatter)) {
    for (const v of frontmatter) {
      const f = findCredentialInValues(v, key);
      if (f) return f;
    }
    return undefined;
  }
  if (frontmatter !== null && typeof frontmatter === 'object') {
    for (const [k, v] of Object.entries(frontmatter)) {
      const f = findCredentialInValues(v, k);
      if (f) return f;
    }
  }
  return undefined;
}
