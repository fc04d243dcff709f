import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The real `git` client against the memory's git remote: an isolated configuration (no system or
 * global config, no prompts, `main` as the default branch, a fixed identity), a scratch directory
 * per test file, and `fsck` after every step the tests take.
 */
export interface GitRun {
  status: number;
  stdout: string;
  stderr: string;
}

export interface GitSandbox {
  root: string;
  /** Runs git in `dir` (relative to the sandbox), with `input` on its stdin; never throws. Asynchronous: the stack may answer in this very process. */
  run(dir: string, args: string[], env?: Record<string, string>, input?: string): Promise<GitRun>;
  /** Runs git and fails the test on a non-zero exit, with git's output. */
  ok(dir: string, args: string[], env?: Record<string, string>, input?: string): Promise<string>;
  /** `git fsck --full --strict` must be clean. */
  fsck(dir: string): Promise<void>;
  /** Writes a file in a clone (folders created). */
  write(dir: string, path: string, text: string): void;
  cleanup(): void;
}

export function gitSandbox(prefix: string): GitSandbox {
  const root = mkdtempSync(join(process.env.TEST_TMP_DIR ?? tmpdir(), `${prefix}-`));
  const config = join(root, 'gitconfig');
  writeFileSync(config, '[init]\n\tdefaultBranch = main\n[user]\n\tname = Git Tester\n\temail = tester@example.com\n[pull]\n\trebase = false\n');
  const env = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: config,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    LC_ALL: 'C',
    HOME: root,
  };
  const run = (dir: string, args: string[], extra: Record<string, string> = {}, input?: string): Promise<GitRun> =>
    new Promise((resolve) => {
      const child = spawn('git', args, { cwd: join(root, dir), env: { ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
      // Without input, stdin is at its end at once, as /dev/null would be; git may exit before reading it.
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString('utf8');
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ status: code ?? -1, stdout, stderr });
      });
    });
  const ok = async (dir: string, args: string[], extra?: Record<string, string>, input?: string): Promise<string> => {
    const r = await run(dir, args, extra, input);
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed (${r.status})\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  return {
    root,
    run,
    ok,
    fsck: async (dir) => {
      await ok(dir, ['fsck', '--full', '--strict', '--no-dangling']);
    },
    write: (dir, path, text) => {
      const file = join(root, dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The repository URL with the token as the HTTP Basic password. */
export function basicUrl(base: string, memory: string, token: string): string {
  const u = new URL(`${base}/v1/memories/${memory}.git`);
  u.username = 'git';
  u.password = token;
  return u.toString();
}

export interface Interposer {
  url: string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy in front of the stack (or of a backend: DynamoDB Local, the S3 server) that
 * runs `before` when a request matching `when` arrives, and only then forwards it: a way to make
 * another writer land at an exact moment of a git exchange (after the push's advertisement, before
 * its pack is taken), or to hold one storage call while others go by.
 */
export async function interpose(
  target: string,
  when: (method: string, path: string, headers: Record<string, string | string[] | undefined>, body: Buffer) => boolean,
  before: () => Promise<void>,
): Promise<Interposer> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        if (when(req.method ?? 'GET', (req.url ?? '').split('?')[0], req.headers, body)) await before();
        const headers = { ...req.headers, host: upstream.host };
        delete headers['transfer-encoding'];
        headers['content-length'] = String(body.length);
        const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        // Transparent: an upstream that cannot be reached looks to the client as it would without
        // the proxy (a dropped connection), not like an upstream that answered 502.
        out.on('error', () => res.destroy());
        out.end(body);
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
