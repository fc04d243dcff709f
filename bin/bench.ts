import './bench/env';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCatalogBench } from './bench/catalog';
import { runCrawlerBench } from './bench/crawler';
import type { BenchSection } from './bench/stats';

/** `npm run bench`: every benchmark in one run; the figures go to BENCHMARKS.md. */

const SECTIONS: Array<{ name: string; run: (log: (m: string) => void) => Promise<BenchSection> }> = [
  { name: 'catalog', run: runCatalogBench },
  { name: 'crawler', run: runCrawlerBench },
];

function render(sections: BenchSection[], started: Date): string {
  const cpu = cpus();
  const lines = [
    '# Benchmarks',
    '',
    `Produced by \`npm run bench\` on ${started.toISOString().slice(0, 10)}: Node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB. All figures of one run; medians (p50) and p99 over the samples stated. Benchmarks are scripts, never test assertions.`,
    '',
  ];
  for (const s of sections) {
    lines.push(`## ${s.title}`, '', '| metric | value | target | |', '|---|---|---|---|');
    for (const r of s.rows) lines.push(`| ${r.join(' | ')} |`);
    lines.push('', '**How it was measured**', '', s.method, '');
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const started = new Date();
  const results: BenchSection[] = [];
  for (const s of SECTIONS) {
    if (only.length && !only.includes(s.name)) continue;
    console.error(`[bench] ${s.name}`);
    results.push(await s.run((m) => console.error(`[bench:${s.name}] ${m}`)));
  }
  const md = render(results, started);
  writeFileSync(join(__dirname, '..', 'BENCHMARKS.md'), md);
  console.log(md);
}

main().catch((err: unknown) => {
  console.error('[bench] failed:', err);
  process.exit(1);
});
