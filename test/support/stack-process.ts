import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** `npm start` as a process, for the tests that run the local stack the way a user does. */
export const ROOT = join(__dirname, '..', '..');
export const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

/** Polls `fn` until it answers something (errors count as no answer), or fails after `timeoutMs`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90000, context: () => string = () => ''): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `tsx bin/local.ts [args]` on `dataDir` and `port`; its stderr goes to `onLog`. */
export function spawnStack(dataDir: string, port: number, onLog: (text: string) => void, env: Record<string, string> = {}, args: string[] = []): ChildProcess {
  const child = spawn(TSX, ['bin/local.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'SILENT', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (d: Buffer) => onLog(d.toString()));
  return child;
}

/**
 * `tsx <args>` (one of the CLIs) run to completion with exactly `env`, without blocking the event
 * loop: a blocked loop would miss the server closing an idle keep-alive connection, and the next
 * fetch would go out on the dead socket.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A graceful stop (SIGTERM: the stack stops its backends), then SIGKILL after `timeoutMs`. */
export async function stopStack(child: ChildProcess | undefined, timeoutMs = 15000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
  child.kill('SIGKILL');
}
