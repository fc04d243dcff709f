import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { issuerKeyPath } from '../../lambdas/identity/local-issuer';

/** Where everything persistent of the local stack lives (`DATA_DIR`, default `.data/`). */
export interface DataDir {
  root: string;
  dynamo: string;
  s3: string;
  searchSnapshot: string;
  cursorKeys: string;
  /** The local issuer's signing key (`keys/issuer.json`), shared by `npm start` and `npm run token`. */
  issuerKey: string;
  runDir: string;
  stackFile: string;
}

export function dataDir(root = process.env.DATA_DIR || '.data'): DataDir {
  const abs = resolve(root);
  return {
    root: abs,
    dynamo: join(abs, 'dynamodb'),
    s3: join(abs, 's3'),
    searchSnapshot: join(abs, 'search', 'catalog.json'),
    cursorKeys: join(abs, 'keys', 'cursor-keys.json'),
    issuerKey: issuerKeyPath(abs),
    runDir: join(abs, 'run'),
    stackFile: join(abs, 'run', 'stack.json'),
  };
}

/** Generates the cursor-signing key ring on first use (Secrets Manager holds it in AWS). */
export function ensureCursorKeys(d: DataDir): void {
  if (existsSync(d.cursorKeys)) return;
  mkdirSync(join(d.cursorKeys, '..'), { recursive: true });
  const ring = { current: { id: 1, secret: randomBytes(32).toString('base64') } };
  writeFileSync(d.cursorKeys, JSON.stringify(ring, null, 2), { mode: 0o600 });
}

/** What a running `npm start` publishes so `npm run seed`/`crawl` reuse its backends. */
export interface StackInfo {
  pid: number;
  url: string;
  /** PUBLIC_URL of the deployment (issuer and audience of its tokens); instances that attach share it. */
  publicUrl?: string;
  dynamoEndpoint: string;
  s3Endpoint: string;
}

export function writeStackInfo(d: DataDir, info: StackInfo): void {
  mkdirSync(d.runDir, { recursive: true });
  writeFileSync(d.stackFile, JSON.stringify(info));
}

export function clearStackInfo(d: DataDir): void {
  rmSync(d.stackFile, { force: true });
}

/** The running stack on this data dir, if its process is alive. */
export function runningStack(d: DataDir): StackInfo | undefined {
  if (!existsSync(d.stackFile)) return undefined;
  try {
    const info = JSON.parse(readFileSync(d.stackFile, 'utf8')) as StackInfo;
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined;
  }
}
