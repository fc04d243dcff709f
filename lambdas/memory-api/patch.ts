import type { DiffResult, FileDiff } from '../memory';

/**
 * A diff as the text `git diff` writes (`text/x-diff`): `diff --git` headers with the blob ids,
 * new, deleted and renamed files marked as git marks them, then the hunks. `git apply` takes it.
 */
export function unifiedDiff(diff: DiffResult): string {
  return diff.files.map(fileText).join('');
}

const ZERO = '0000000';
const short = (oid: string | undefined): string => (oid ? oid.slice(0, 12) : ZERO);

/** Paths git would quote (a `"` or a `\` in them) are written as C strings, as git does. */
function quoted(prefix: string, path: string): string {
  if (!/["\\]/.test(path)) return `${prefix}${path}`;
  return `"${prefix}${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function fileText(f: FileDiff): string {
  const oldPath = f.from ?? f.path;
  const lines = [`diff --git ${quoted('a/', oldPath)} ${quoted('b/', f.path)}`];
  if (f.change === 'added') lines.push('new file mode 100644', `index ${ZERO}..${short(f.newBlob)}`);
  else if (f.change === 'deleted') lines.push('deleted file mode 100644', `index ${short(f.oldBlob)}..${ZERO}`);
  else if (f.change === 'renamed') {
    lines.push(`similarity index ${f.similarity ?? 100}%`, `rename from ${quoted('', oldPath)}`, `rename to ${quoted('', f.path)}`);
    if (f.hunks.length > 0) lines.push(`index ${short(f.oldBlob)}..${short(f.newBlob)} 100644`);
  } else lines.push(`index ${short(f.oldBlob)}..${short(f.newBlob)} 100644`);
  if (f.hunks.length > 0) {
    lines.push(
      f.change === 'added' ? '--- /dev/null' : `--- ${quoted('a/', oldPath)}`,
      f.change === 'deleted' ? '+++ /dev/null' : `+++ ${quoted('b/', f.path)}`,
    );
    for (const h of f.hunks) lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines);
  }
  return `${lines.join('\n')}\n`;
}
