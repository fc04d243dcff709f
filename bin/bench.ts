import './bench/env';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCatalogBench } from './bench/catalog';
import { runCatalogCpuBench } from './bench/catalog-cpu';
import { runCatalogScale } from './bench/catalog-scale';
import { runCatalog100kMixBench } from './bench/catalog-100k-mix';
import { runChecksBench } from './bench/checks';
import { runCrawlerBench } from './bench/crawler';
import { runCrawlerDeployedBench } from './bench/crawler-deployed';
import { runMemoryBench } from './bench/memory';
import { runMemoryContentionBench } from './bench/memory-contention';
import { runGitBench } from './bench/git';
import { runMcpBench } from './bench/mcp';
import { runLambdasBench } from './bench/lambdas';
import { runSiteBench } from './bench/site';
import { runRelevanceBench } from './bench/relevance';
import { runEmbeddedBench } from './bench/embedded';
import { runCredentialsBench } from './bench/credentials';
import type { BenchSection } from './bench/stats';

/** `npm run bench`: every benchmark in one run; the figures go to BENCHMARKS.md. */

const SECTIONS: Array<{ name: string; run: (log: (m: string) => void) => Promise<BenchSection> }> = [
  { name: 'catalog', run: runCatalogBench },
  { name: 'catalog-cpu', run: runCatalogCpuBench },
  { name: 'catalog-10k', run: runCatalogScale(10_000) },
  { name: 'catalog-100k', run: runCatalogScale(100_000) },
  { name: 'catalog-100k-mix', run: runCatalog100kMixBench },
  { name: 'crawler', run: runCrawlerBench },
  { name: 'crawler-30k', run: runCrawlerDeployedBench },
  { name: 'checks', run: runChecksBench },
  { name: 'memory', run: runMemoryBench },
  { name: 'memory-contention', run: runMemoryContentionBench },
  { name: 'git', run: runGitBench },
  { name: 'mcp', run: runMcpBench },
  { name: 'lambdas', run: runLambdasBench },
  { name: 'embedded', run: runEmbeddedBench },
  { name: 'site', run: runSiteBench },
  { name: 'relevance', run: runRelevanceBench },
  { name: 'credentials', run: runCredentialsBench },
];

/** The date and machine of a section's run, written under its title. */
function runLine(started: Date): string {
  const cpu = cpus();
  // The load average says how shared the machine was: the figures of a busy minute are not a quiet one's.
  return `Run on ${started.toISOString().slice(0, 10)}: Node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()[0].toFixed(1)} when it started.`;
}

function render(sections: BenchSection[]): string {
  const lines = [
    '# Benchmarks',
    '',
    `Produced by \`npm run bench\`; \`npm run bench -- <section>\` (${SECTIONS.map((x) => x.name).join(', ')}) runs one section and rewrites only that one. Each section says when and on what machine it ran; its figures come from that one run; medians (p50) and p99 over the samples stated. Benchmarks are scripts, never test assertions.`,
    '',
  ];
  for (const s of sections) {
    lines.push(`## ${s.title}`, '', `_${s.ran ?? 'Run on an unrecorded date.'}_`, '', '| metric | value | target | |', '|---|---|---|---|');
    for (const r of s.rows) lines.push(`| ${r.join(' | ')} |`);
    lines.push('', '**How it was measured**', '', s.method, '');
  }
  return lines.join('\n');
}

/** A section of an earlier BENCHMARKS.md, kept verbatim (its own date included) by a partial run. */
function parseSection(text: string): BenchSection {
  const title = text.slice(3, text.indexOf('\n'));
  const rows = text
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| metric') && !l.startsWith('|---'))
    .map((l) => l.slice(2, -2).split(' | ') as [string, string, string, string]);
  const method = text.split('**How it was measured**')[1]?.trim() ?? '';
  const ran = /^_(Run on [^\n]*)_$/m.exec(text)?.[1];
  return { title, rows, method, ...(ran && { ran }) };
}

async function main(): Promise<void> {
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = only.filter((n) => !SECTIONS.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown section ${unknown.join(', ')}; sections: ${SECTIONS.map((s) => s.name).join(', ')}`);
  const results: BenchSection[] = [];
  for (const s of SECTIONS) {
    if (only.length && !only.includes(s.name)) continue;
    console.error(`[bench] ${s.name}`);
    // The line is made before the run: its load average is the one the section started under.
    const ran = runLine(new Date());
    const section = await s.run((m) => console.error(`[bench:${s.name}] ${m}`));
    results.push({ ...section, ran });
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
  const md = render(sections);
  writeFileSync(file, md);
  console.log(md);
}

main().catch((err: unknown) => {
  console.error('[bench] failed:', err);
  process.exit(1);
});
