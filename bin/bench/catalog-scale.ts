import { embeddedSearchIndex } from '../../lambdas/catalog-core';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCatalogDeps } from '../../lambdas/catalog/wiring';
import { freePort, startDynamoLocal, startS3Server } from '../local-stack/backends';
import { localCatalogConfig, provision } from '../local-stack/catalog-env';
import { dataDir } from '../local-stack/data-dir';
import { handlerCases, handlerLatencyRows } from './catalog';
import { ms, type BenchSection } from './stats';

/**
 * The catalog at 10,000 and 100,000 servers, through the CLIs a user runs: `npm run seed --
 * --count N` and `npm run reindex` into a fresh DATA_DIR, then `npm start` on it; each in its own
 * process, timed from spawn to exit (or to "ready"), with its peak RSS. Then the five read
 * endpoints' handler latency over that catalog's snapshot.
 */

const ROOT = join(__dirname, '..', '..');
const MAX_RSS = join(__dirname, 'report-max-rss.cjs');

interface Run {
  ms: number;
  /** Peak RSS of the node process, MiB (backends it started are not counted). */
  maxRssMiB: number;
  stdout: string;
}

/** Runs a CLI of this repository as `npm run` does (tsx), in `dataDirPath`, and measures it. */
function runCli(script: string, args: string[], dataDirPath: string, tmp: string): Promise<Run> {
  const rssFile = join(tmp, `rss-${randomBytes(4).toString('hex')}`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', MAX_RSS, '--import', 'tsx', join(ROOT, 'bin', script), ...args], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDirPath, BENCH_MAX_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited with ${code}: ${stderr.slice(-2000)}`));
      resolve({ ms: performance.now() - started, maxRssMiB: Number(readFileSync(rssFile, 'utf8')) / 1024, stdout });
    });
  });
}

/** RSS now (MiB) of a live process, from /proc. */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** `npm start` on the data dir: time to ready, RSS after the read endpoints were each asked once and after 200 mixed reads. */
async function serve(dataDirPath: string, tmp: string): Promise<{ readyMs: number; rssReady: number; rssWarm: number; maxRssMiB: number }> {
  const port = await freePort();
  const rssFile = join(tmp, `rss-${randomBytes(4).toString('hex')}`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--require', MAX_RSS, '--import', 'tsx', join(ROOT, 'bin', 'local.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDirPath, PORT: String(port), BENCH_MAX_RSS_FILE: rssFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('[local] ready in')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${err.slice(-2000)}`)));
    });
    const readyMs = performance.now() - started;
    const pid = child.pid as number;
    const base = `http://127.0.0.1:${port}`;
    const paths = [
      '/api/mcps',
      `/api/mcps?type=npm&category=${encodeURIComponent('Data & Databases')}&sort=stars`,
      '/api/search?q=database',
      '/api/autocomplete?q=pos',
      '/api/facets',
    ];
    for (const p of paths) {
      const res = await fetch(base + p);
      if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
      await res.arrayBuffer();
    }
    const rssReady = rssMiB(pid);
    for (let i = 0; i < 200; i++) {
      // One connection, sequential, so the figure is the server's memory and not a queue's.
      const res = await fetch(`${base}${paths[i % paths.length]}${paths[i % paths.length].includes('?') ? '&' : '?'}page=${1 + (i % 5)}`);
      await res.arrayBuffer();
    }
    const rssWarm = rssMiB(pid);
    child.kill('SIGTERM');
    await exited;
    return { readyMs, rssReady, rssWarm, maxRssMiB: Number(readFileSync(rssFile, 'utf8')) / 1024 };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

const mib = (v: number) => `${v.toFixed(0)} MiB`;
const secs = (v: number) => `${(v / 1000).toFixed(1)} s`;

/** One size per section, so each runs alone (`npm run bench -- catalog-100k`: about an hour on this machine, mostly the seed). */
export const runCatalogScale = (n: number) => (log: (m: string) => void) => runCatalogScaleBench(n, log);

async function runCatalogScaleBench(n: number, log: (m: string) => void): Promise<BenchSection> {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-catalog-scale-'));
  const rows: BenchSection['rows'] = [];
  try {
    {
      const label = '';
      const dir = join(tmp, `data-${n}`);
      const seeded = process.env.BENCH_SEEDED_DATA_DIR;
      if (seeded !== undefined) {
        // A DATA_DIR an earlier `npm run seed -- --count n` filled (the seed alone takes most of an hour at 100,000 here).
        // Not `run/`: its pid files name the seeding run's backends, which a start would take for stale ones.
        cpSync(seeded, dir, { recursive: true, filter: (src) => !src.startsWith(join(seeded, 'run')) });
        rows.push([
          `${label}seed (\`npm run seed -- --count ${n}\`)`,
          `not run here (BENCH_SEEDED_DATA_DIR)${process.env.BENCH_SEEDED_NOTE ? `; ${process.env.BENCH_SEEDED_NOTE}` : ''}`,
          '',
          '',
        ]);
      } else {
        log(`${label}npm run seed -- --count ${n}`);
        const seed = await runCli('seed.ts', ['--count', String(n)], dir, tmp);
        rows.push([
          `${label}seed (\`npm run seed -- --count ${n}\`: DynamoDB, icons, index) time / peak RSS`,
          `${secs(seed.ms)} / ${mib(seed.maxRssMiB)}`,
          '',
          '',
        ]);
        log(`${label}seed ${secs(seed.ms)}, ${mib(seed.maxRssMiB)}`);
      }
      if (seeded !== undefined && process.env.BENCH_REINDEX === '0') {
        // The seed wrote the snapshot too; serving it is then measured without rebuilding it.
        rows.push([`${label}reindex (\`npm run reindex\`)`, 'not run here (BENCH_REINDEX=0, see the seed row)', '', '']);
      } else {
        log(`${label}npm run reindex`);
        const reindex = await runCli('reindex.ts', [], dir, tmp);
        const reindexed = Number(/reindexed (\d+) servers/.exec(reindex.stdout)?.[1]);
        if (reindexed !== n) throw new Error(`reindex found ${reindexed} servers, not ${n}: ${reindex.stdout}`);
        rows.push([
          `${label}reindex (\`npm run reindex\`: table scan, index build, snapshot write) time / peak RSS`,
          `${secs(reindex.ms)} / ${mib(reindex.maxRssMiB)}`,
          '',
          '',
        ]);
        log(`${label}reindex ${secs(reindex.ms)}, ${mib(reindex.maxRssMiB)}`);
      }
      const snapshot = dataDir(dir).searchSnapshot;
      rows.push([`${label}search snapshot file`, `${(statSync(snapshot).size / 2 ** 20).toFixed(1)} MiB`, '', '']);
      log(`${label}npm start`);
      const server = await serve(dir, tmp);
      rows.push([`${label}\`npm start\` on it: ready`, secs(server.readyMs), '', '']);
      rows.push([
        `${label}\`npm start\` RSS: after one request per read endpoint / after 200 more / peak`,
        `${mib(server.rssReady)} / ${mib(server.rssWarm)} / ${mib(server.maxRssMiB)}`,
        '',
        '',
      ]);

      // Handler latency over the same snapshot, in this process; the limiter on a DynamoDB Local of its own.
      const [ddb, s3] = await Promise.all([startDynamoLocal({}), startS3Server({ dir: join(tmp, `s3-${n}`), buckets: [] })]);
      try {
        const keys = join(tmp, 'keys.json');
        writeFileSync(keys, JSON.stringify({ current: { id: 1, secret: randomBytes(32).toString('base64') } }));
        const config = {
          ...localCatalogConfig(dataDir(join(tmp, `handler-${n}`)), ddb.endpoint, s3.endpoint),
          searchSnapshotPath: undefined,
          cursorKeysFile: keys,
          responseCacheEntries: 0,
        };
        await provision(config);
        const loadStarted = performance.now();
        const fromFile = embeddedSearchIndex({ snapshotPath: snapshot });
        await fromFile.facets(); // loads the snapshot and builds the view
        rows.push([`${label}snapshot load and first read (in-process)`, ms(performance.now() - loadStarted), '', '']);
        const deps = await createCatalogDeps(config, fromFile);
        rows.push(...(await handlerLatencyRows(deps, handlerCases(), log, label)));
      } finally {
        await Promise.all([ddb.stop(), s3.stop()]);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return {
    title: `Catalog at scale: ${n.toLocaleString('en-US')} synthetic servers seeded, reindexed and served`,
    method: [
      '- Data: `generateCatalog(n)` (deterministic, seed 1) through the CLIs a user runs, each in its own `node` process (tsx, as `npm run` starts them) on a fresh DATA_DIR: `seed.ts --count n` (starts DynamoDB Local and the S3 server, writes the catalog table in batches of 100, renders and stores the icons, builds the search index and writes its snapshot), then `reindex.ts` (scans the table back, rebuilds the index, rewrites the snapshot), then `local.ts` (`npm start`: loads the snapshot, serves). Times are wall time from spawn to exit (to the "ready" line for `npm start`); peak RSS is the node process\'s own (`process.resourceUsage().maxRSS`, written at exit by `report-max-rss.cjs`), without the Java and S3 children.',
      '- With `BENCH_SEEDED_DATA_DIR` (a DATA_DIR an earlier `seed.ts --count n` filled, copied without its pid files), the seed is not run and its row says so; its time and memory, when known, come from the run that seeded it (`BENCH_SEEDED_NOTE`, the figures that run logged); with `BENCH_REINDEX=0` as well, the reindex is not run either and the snapshot the seed wrote is served.',
      '- `npm start` RSS: `/proc/<pid>/status` VmRSS once each read endpoint has answered one request (the view and the autocomplete dictionary built) and after 200 more sequential reads over five pages.',
      '- Handler latency: as in "Catalog API" (`handleCatalogRequest` in-process, response cache off, 3,000 sequential requests per case after 200 warm-ups, the real limiter at the spec\'s anonymous limit over 100 client IPs per case on DynamoDB Local), over the index loaded from the snapshot `reindex` wrote. Filters are answered from per-value bitsets over the popularity ranks (AND of ORs, the total a population count) and autocomplete from a sorted dictionary of names, name tails and titles (`embedded-view.ts`).',
      "- The machine is shared (2 cores, the other engineers' runs): the load average under the title says how busy; times move with it, memory does not.",
    ].join('\n'),
    rows,
  };
}
