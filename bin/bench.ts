import './bench/env';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCatalogBench } from './bench/catalog';
import { runCrawlerBench } from './bench/crawler';
import { runMemoryBench } from './bench/memory';
import { runMcpBench } from './bench/mcp';
import { runLambdasBench } from './bench/lambdas';
import { runEmbeddedBench } from './bench/embedded';
import type { BenchSection } from './bench/stats';

/** `npm run bench`: every benchmark in one run; the figures go to BENCHMARKS.md. */

const SECTIONS: Array<{ name: string; run: (log: (m: string) => void) => Promise<BenchSection> }> = [
  { name: 'catalog', run: runCatalogBench },
  { name: 'crawler', run: runCrawlerBench },
  { name: 'memory', run: runMemoryBench },
  { name: 'mcp', run: runMcpBench },
  { name: 'lambdas', run: runLambdasBench },
  { name: 'embedded', run: runEmbeddedBench },
];

function render(sections: BenchSection[], started: Date): string {
  const cpu = cpus();
  const lines = [
    '# Benchmarks',
    '',
    `Produced by \`npm run bench\` on ${started.toISOString().slice(0, 10)}: Node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB. The figures of each section come from one run; medians (p50) and p99 over the samples stated. Benchmarks are scripts, never test assertions.`,
    '',
  ];
  for (const s of sections) {
    lines.push(`## ${s.title}`, '', '| metric | value | target | |', '|---|---|---|---|');
    for (const r of s.rows) lines.push(`| ${r.join(' | ')} |`);
    lines.push('', '**How it was measured**', '', s.method, '');
  }
  return lines.join('\n');
}

/** A section of an earlier BENCHMARKS.md, kept verbatim by a partial run. */
function parseSection(text: string): BenchSection {
  const title = text.slice(3, text.indexOf('\n'));
  const rows = text
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| metric') && !l.startsWith('|---'))
    .map((l) => l.slice(2, -2).split(' | ') as [string, string, string, string]);
  const method = text.split('**How it was measured**')[1]?.trim() ?? '';
  return { title, rows, method };
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
  // A partial run (`npm run bench -- catalog`) replaces its own sections in place and keeps the others.
  const file = join(__dirname, '..', 'BENCHMARKS.md');
  let sections = results;
  if (only.length && existsSync(file)) {
    const earlier = readFileSync(file, 'utf8')
      .split(/\n(?=## )/)
      .slice(1)
      .map(parseSection);
    sections = earlier.map((old) => results.find((r) => r.title === old.title) ?? old);
    sections.push(...results.filter((r) => !earlier.some((old) => old.title === r.title)));
  }
  const md = render(sections, started);
  writeFileSync(file, md);
  console.log(md);
}

main().catch((err: unknown) => {
  console.error('[bench] failed:', err);
  process.exit(1);
});
