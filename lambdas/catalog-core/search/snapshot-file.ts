import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { sleep } from '../../shared/concurrency';
import type { CatalogRecord } from '../domain/types';
import { toEntry, type Entry } from './embedded-view';
import { TextIndex, type SerializedText } from './text-index';

/**
 * The embedded index's snapshot file, shared between processes: writers in one (seed, crawl,
 * reindex CLIs) and readers in another (the local HTTP server) see one catalog. Writers rewrite the
 * whole file atomically under a lock file; readers notice a new file by its stat signature and
 * reload it.
 */
const LOCK_STALE_MS = 30_000;
const LOCK_TIMEOUT_MS = 120_000;
/** Version 3: six fields (the name split into its tail and the publisher), stems, word pairs. */
const SNAPSHOT_FORMAT = 'catalog-embedded-search/3';

interface SnapshotFile {
  format: string;
  /** In the text index's ordinal order. */
  records: CatalogRecord[];
  text: SerializedText;
}

export const MISSING = 'missing';

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** Identifies one version of the file: each atomic rename brings a new inode, mtime and size. */
export async function statSignature(file: string): Promise<string> {
  try {
    const st = await fsp.stat(file, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return MISSING;
    throw err;
  }
}

/** A snapshot decoded into the engine's parts, and the signature of the version it was read from. */
export interface LoadedSnapshot {
  entries: Map<string, Entry>;
  text: TextIndex<Entry>;
  signature: string;
}

export async function readSnapshot(file: string): Promise<LoadedSnapshot | undefined> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  let raw: string;
  let signature: string;
  try {
    // Stat the open handle, not the path, so the signature belongs to the bytes we read.
    const st = await handle.stat({ bigint: true });
    signature = `${st.ino}:${st.size}:${st.mtimeNs}`;
    raw = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  return decodeSnapshot(raw, file, signature);
}

/**
 * A snapshot's JSON text into the engine's parts (the file above, or an S3 object in AWS, see
 * `s3-snapshot.ts`). `source` names it in the error a foreign or outdated format gets.
 */
export function decodeSnapshot(raw: string, source: string, signature: string): LoadedSnapshot {
  const parsed: unknown = JSON.parse(raw);
  if (!isSnapshotFile(parsed)) {
    throw new Error(`${source} is not a ${SNAPSHOT_FORMAT} snapshot; rebuild it (npm run seed / npm run reindex)`);
  }
  const ordered = parsed.records.map(toEntry);
  const text = TextIndex.fromJSON(parsed.text, ordered, (e) => e.slug);
  const entries = new Map<string, Entry>();
  for (const e of ordered) entries.set(e.slug, e);
  return { entries, text, signature };
}

/** The snapshot's JSON text of an index (compacting it: ordinal i becomes the i-th live entry). */
export function encodeSnapshot(text: TextIndex<Entry>): string {
  const serializedText = text.toJSON();
  const records: CatalogRecord[] = [];
  for (const e of text.compact()) if (e !== undefined) records.push(e.record);
  const snapshot: SnapshotFile = { format: SNAPSHOT_FORMAT, records, text: serializedText };
  return JSON.stringify(snapshot);
}

function isSnapshotFile(v: unknown): v is SnapshotFile {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  if (o.format !== SNAPSHOT_FORMAT || !Array.isArray(o.records)) return false;
  const text = o.text as Record<string, unknown> | null | undefined;
  return typeof text === 'object' && text !== null && Array.isArray(text.terms) && Array.isArray(text.postings) && Array.isArray(text.fieldLengths);
}

/** Writes the snapshot atomically (temp file + rename) and returns the new file's signature. */
export async function writeSnapshot(file: string, text: TextIndex<Entry>): Promise<string> {
  const json = encodeSnapshot(text);
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  const handle = await fsp.open(tmp, 'wx');
  let signature: string;
  try {
    await handle.writeFile(json, 'utf8');
    // No fsync: this is a local-development cache, rebuildable from the store; rename alone
    // already guarantees readers never see a half-written file.
    const st = await handle.stat({ bigint: true });
    signature = `${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch (err) {
    await handle.close();
    await fsp.unlink(tmp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  try {
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw err;
  }
  return signature;
}

/**
 * A lock file created with O_EXCL. A lock older than 30 s is taken to belong to a crashed
 * process and is broken; the token check on release keeps us from deleting a successor's lock.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const token = `${process.pid}:${randomUUID()}`;
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      await fsp.writeFile(lockPath, token, { flag: 'wx' });
      break;
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
    try {
      const st = await fsp.stat(lockPath);
      if (Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await fsp.unlink(lockPath).catch(() => undefined);
        continue;
      }
    } catch (err) {
      if (errorCode(err) === 'ENOENT') continue;
      throw err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the search snapshot lock ${lockPath}`);
    await sleep(15 + Math.random() * 35);
  }
  try {
    return await fn();
  } finally {
    const held = await fsp.readFile(lockPath, 'utf8').catch(() => undefined);
    if (held === token) await fsp.unlink(lockPath).catch(() => undefined);
  }
}
