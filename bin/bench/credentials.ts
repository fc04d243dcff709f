import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../lambdas/memory/config';
import { findCredential } from '../../lambdas/memory/credentials';
import { MemoryError } from '../../lambdas/memory/errors';
import { checkStored } from '../../lambdas/memory/content';
import { validateNewNotePath } from '../../lambdas/memory/paths';
import { summarize, verdict, type BenchSection } from './stats';

/**
 * `npm run bench -- credentials`: the credential refusal against its two corpora
 * (`test/fixtures/credentials`: the evasions, none of which may be stored, and ordinary notes, all
 * of which must be), plus a second ordinary corpus, this repository's own documentation cut at its
 * headings (prose about tokens, keys and passwords, code, tables, URLs); and what the scan costs per
 * KB on the write path, for ordinary text, a base64 image and a worst case of long token-like words.
 */
const ROOT = join(__dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'credentials');

interface Evasion {
  kind: string;
  text: string;
  path?: string;
  moveTo?: string;
}

/** What a write checks: the path it creates and the stored text. Refused: true. */
function refused(path: string, text: string): boolean {
  try {
    checkStored(text, validateNewNotePath(path, DEFAULT_LIMITS), DEFAULT_LIMITS);
    return false;
  } catch (err) {
    if (err instanceof MemoryError && err.reason === 'refused_content') return true;
    throw err;
  }
}

function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.') || e.name === 'cdk.out' || e.name === 'fixtures') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...markdownFiles(p));
    else if (e.name.endsWith('.md') && e.name !== 'BENCHMARKS.md') out.push(p);
  }
  return out;
}

/** Microseconds per KB of `findCredential` over `text`, median of `runs`. */
function costPerKb(text: string, runs: number): { p50: number; p99: number } {
  const kb = Buffer.byteLength(text) / 1024;
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    findCredential(text);
    samples.push(((performance.now() - t) * 1000) / kb);
  }
  return summarize(samples);
}

export async function runCredentialsBench(log: (m: string) => void): Promise<BenchSection> {
  const { evasions } = JSON.parse(readFileSync(join(FIXTURES, 'evasions.json'), 'utf8')) as { evasions: Evasion[] };
  const stored = evasions.filter((e) => !refused(e.moveTo ?? e.path ?? 'note.md', e.text));
  log(`evasions stored: ${stored.length} of ${evasions.length}`);
  const ordinary = readdirSync(join(FIXTURES, 'ordinary')).map((f) => readFileSync(join(FIXTURES, 'ordinary', f), 'utf8'));
  const ordinaryRefused = ordinary.filter((t) => refused('notes/n.md', t)).length;
  const docs = markdownFiles(ROOT).flatMap((f) => readFileSync(f, 'utf8').split(/\n(?=## )/));
  const docsRefused = docs.filter((t) => refused('notes/n.md', t));
  log(`docs sections refused: ${docsRefused.length} of ${docs.length}`);

  const prose = ordinary.join('\n');
  const image = `![i](data:image/png;base64,${Buffer.from(Array.from({ length: 48 * 1024 }, (_, i) => (i * 7919) % 251)).toString('base64')})\n`;
  const tokens = Array.from({ length: 4000 }, (_, i) => `ref-${i.toString(36)}x${(i * 2654435761).toString(36)}Ab9`).join('\n');
  const docText = docs.join('\n').slice(0, 256 * 1024);
  const cost = {
    ordinary: costPerKb(prose, 50),
    docs: costPerKb(docText, 10),
    image: costPerKb(image, 20),
    tokens: costPerKb(tokens, 20),
  };
  const us = (c: { p50: number; p99: number }) => `${c.p50.toFixed(1)} / ${c.p99.toFixed(1)} µs`;
  const rows: BenchSection['rows'] = [
    [`evasions stored (corpus of ${evasions.length} kinds)`, `${stored.length} of ${evasions.length}`, '0', verdict(stored.length === 0)],
    [
      `false positives, ordinary-notes corpus (${ordinary.length} notes)`,
      `${ordinaryRefused} of ${ordinary.length} (${((100 * ordinaryRefused) / ordinary.length).toFixed(1)} %)`,
      '0',
      verdict(ordinaryRefused === 0),
    ],
    [
      `false positives, this repository's documentation cut at its headings (${docs.length} notes)`,
      `${docsRefused.length} of ${docs.length} (${((100 * docsRefused.length) / docs.length).toFixed(1)} %)`,
      '< 1 %',
      verdict(docsRefused.length < docs.length / 100),
    ],
    [
      `scan cost per KB, ordinary notes (${(Buffer.byteLength(prose) / 1024).toFixed(0)} KB), p50 / p99`,
      us(cost.ordinary),
      '< 100 µs (0.1 s for a 1 MiB note)',
      verdict(cost.ordinary.p50 < 100),
    ],
    [
      `scan cost per KB, documentation (${(Buffer.byteLength(docText) / 1024).toFixed(0)} KB), p50 / p99`,
      us(cost.docs),
      '< 100 µs',
      verdict(cost.docs.p50 < 100),
    ],
    [
      `scan cost per KB, a base64 image (${(Buffer.byteLength(image) / 1024).toFixed(0)} KB), p50 / p99`,
      us(cost.image),
      '< 100 µs',
      verdict(cost.image.p50 < 100),
    ],
    [
      `scan cost per KB, 4,000 lines of token-like words (${(Buffer.byteLength(tokens) / 1024).toFixed(0)} KB), p50 / p99`,
      us(cost.tokens),
      '< 100 µs',
      verdict(cost.tokens.p50 < 100),
    ],
  ];
  return {
    title: 'Credential refusal (corpora and cost)',
    method: [
      '- Each corpus entry goes through what a write checks: the path it creates (`validateNewNotePath`, which scans the path) and the stored text (`checkStored`: the text in every view of `credentials.ts` and `credential-views.ts`, then the decoded front matter). Move entries check their target path.',
      '- Evasions: `test/fixtures/credentials/evasions.json` (invisible characters inside tokens, tokens wrapped over lines, credentials in paths, PEM headers with four dashes, no dashes or an invisible character, key bodies without headers, secrets labelled on the line before, base64, hex, `%XX`, HTML entities, `\\x`/`\\u` escapes, double encodings). Ordinary notes: `test/fixtures/credentials/ordinary/` (code, hashes, UUIDs, git shas, base64 images, long words, URLs, tables, public keys and certificates, logs); and every markdown file of the repository cut at its `## ` headings.',
      '- Cost: `findCredential` alone (the part a write adds per byte), wall time of each run divided by the text size, in one process; the texts are built in the script (a 48 KiB binary as a base64 data URI; 4,000 lines of token-like words with digits, which the wrapped-line view joins).',
      ...(docsRefused.length > 0
        ? [`- Documentation sections refused: ${docsRefused.map((t) => JSON.stringify(t.split('\n')[0].slice(0, 60))).join(', ')}.`]
        : []),
    ].join('\n'),
    rows,
  };
}
