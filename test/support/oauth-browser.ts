import { createHash, randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * A minimal browser for the OAuth front's pages: keeps cookies, never follows redirects on its
 * own (the test looks at each Location), and fills in the local sign-in and consent forms.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  async get(url: string | URL): Promise<Response> {
    return this.keep(await fetch(url, { redirect: 'manual', headers: this.cookieHeader() }));
  }

  async postForm(url: string | URL, fields: Array<[string, string]>): Promise<Response> {
    return this.keep(
      await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader() },
        body: new URLSearchParams(fields).toString(),
      }),
    );
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  private keep(res: Response): Response {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return res;
  }
}

/** The value of a hidden input in one of the front's pages. */
export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no hidden field ${name} in page: ${html.slice(0, 300)}`);
  return m[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

export interface ConsentChoice {
  username?: string;
  /** Scopes ticked on the consent page (default: all offered). */
  scopes?: string[];
  /** `all` (default) or a comma list. */
  memories?: string;
  decision?: 'approve' | 'deny';
}

/**
 * Follows `/oauth/authorize` → local sign-in → consent as a user would, and returns the URL the
 * browser is finally sent to (the client's redirect URI with `code` or `error`).
 */
export async function signInAndConsent(browser: TestBrowser, authorizationUrl: string | URL, choice: ConsentChoice = {}): Promise<URL> {
  const start = await browser.get(authorizationUrl);
  if (start.status === 302) return new URL(start.headers.get('location') as string);
  if (start.status !== 200) throw new Error(`authorize answered ${start.status}: ${await start.text()}`);
  const signIn = await start.text();
  const login = await browser.postForm(new URL('/oauth/login', authorizationUrl), [
    ['tx', hiddenField(signIn, 'tx')],
    ['username', choice.username ?? 'alice'],
  ]);
  if (login.status !== 200) throw new Error(`sign-in answered ${login.status}: ${await login.text()}`);
  const consentPage = await login.text();
  const offered = [...consentPage.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);
  const fields: Array<[string, string]> = [['consent', hiddenField(consentPage, 'consent')]];
  for (const s of choice.scopes ?? offered) fields.push(['scope', s]);
  if (choice.memories === undefined || choice.memories === 'all') fields.push(['memories_mode', 'all'], ['memories', '']);
  else fields.push(['memories_mode', 'some'], ['memories', choice.memories]);
  fields.push(['decision', choice.decision ?? 'approve']);
  const done = await browser.postForm(new URL('/oauth/consent', authorizationUrl), fields);
  if (done.status !== 302) throw new Error(`consent answered ${done.status}: ${await done.text()}`);
  return new URL(done.headers.get('location') as string);
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'http://127.0.0.1:9/callback';

/** An in-memory OAuthClientProvider whose "browser" is a TestBrowser following the pages. */
export class TestProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  sentState = '';
  callback?: URL;
  readonly browser = new TestBrowser();

  constructor(private readonly choice: ConsentChoice = {}) {}

  get redirectUrl(): string {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.sentState = `st-${Math.random().toString(36).slice(2)}`;
    return this.sentState;
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  async redirectToAuthorization(url: URL) {
    this.callback = await signInAndConsent(this.browser, url, this.choice);
  }

  saveCodeVerifier(v: string) {
    this.verifier = v;
  }

  codeVerifier() {
    return this.verifier;
  }
}
