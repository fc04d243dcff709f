import type { MemoryLimits } from './config';
import { CREDENTIAL_LABELS, findCredential, findCredentialInValues } from './credentials';
import { badRequest, MemoryError } from './errors';
import {
  composeNote,
  extractTags,
  extractTitle,
  makeExcerpt,
  parseNoteStrict,
  startsWithFence,
  trySplit,
  validateFrontMatter,
  type FrontMatter,
  type NoteMeta,
} from './markdown';
import type { NoteEdit, NoteInput } from './types';
import { EVENT_METRICS } from '../shared/observability/metric-names';
import { countMetric } from '../shared/observability/metrics';

/**
 * The rules every write and query argument passes, as pure functions of the limits: what a note's
 * stored text may be, how an edit applies, and the shared tag and page-size arguments. Writes check
 * content before they touch storage, so a refused note costs no storage call.
 */

export type EditMode = 'replace' | 'append' | 'str_replace';

/** The stored text of a write: raw markdown as sent, or JSON body and front matter composed. */
export function composeInput(input: NoteInput, limits: MemoryLimits): string {
  if (input === null || typeof input !== 'object') throw badRequest('invalid_argument', 'body is required', 'body');
  if ('markdown' in input) {
    if (typeof input.markdown !== 'string') throw badRequest('invalid_argument', 'body is required', 'body');
    return input.markdown;
  }
  if (typeof input.body !== 'string') throw badRequest('invalid_argument', 'body is required and must be a string', 'body');
  if (startsWithFence(input.body)) {
    throw badRequest(
      'invalid_argument',
      'body may not start with a front-matter fence (---); pass frontmatter as an object, or send raw text/markdown',
      'body',
    );
  }
  const fm = input.frontmatter === undefined ? {} : validateFrontMatter(input.frontmatter, limits);
  return composeNote(fm, input.body);
}

/** Size, front matter and credential checks of a note's full stored text; returns its metadata. */
export function checkStored(text: string, path: string, limits: MemoryLimits): NoteMeta {
  return checkStoredText(text, path, limits).meta;
}

/**
 * `checkStored`, and where the body starts in `text` (what search packs with the text, `PackedText`):
 * a push checks a thousand notes, and parses each note's front matter once for both.
 */
export function checkStoredText(text: string, path: string, limits: MemoryLimits): { meta: NoteMeta; bodyStart: number } {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > limits.maxNoteBytes) {
    throw new MemoryError('BAD_REQUEST', 'too_large', `note is ${size} bytes; the maximum is ${limits.maxNoteBytes} bytes`, { field: 'body' });
  }
  const { frontmatter, split } = parseNoteStrict(text, limits);
  const found = findCredential(text) ?? findCredentialInValues(frontmatter);
  if (found) {
    countMetric(EVENT_METRICS.credentialRefusals);
    const where = found.key === undefined ? `line ${found.line}` : `the front matter value of "${found.key}" (as YAML decodes it)`;
    throw new MemoryError(
      'BAD_REQUEST',
      'refused_content',
      `content refused: ${where} looks like ${CREDENTIAL_LABELS[found.kind]} (${found.kind}); remove the credential`,
      {
        field: 'body',
        credentialKind: found.kind,
      },
    );
  }
  return {
    meta: { title: extractTitle(split.body, path), tags: extractTags(frontmatter, split.body), excerpt: makeExcerpt(split.body), size },
    bodyStart: text.length - split.body.length,
  };
}

/** The edit's mode, once its arguments fit that mode (arguments foreign to it are refused). */
export function checkEdit(edit: NoteEdit): EditMode {
  if (edit === null || typeof edit !== 'object') throw badRequest('invalid_argument', 'edit arguments are required', 'mode');
  const mode = edit.mode ?? 'replace';
  if (mode !== 'replace' && mode !== 'append' && mode !== 'str_replace')
    throw badRequest('invalid_argument', 'mode must be replace, append or str_replace', 'mode');
  if (edit.body !== undefined && typeof edit.body !== 'string') throw badRequest('invalid_argument', 'body must be a string', 'body');
  if (edit.old_str !== undefined && typeof edit.old_str !== 'string') throw badRequest('invalid_argument', 'old_str must be a string', 'old_str');
  if (edit.new_str !== undefined && typeof edit.new_str !== 'string') throw badRequest('invalid_argument', 'new_str must be a string', 'new_str');
  if (mode === 'str_replace') {
    if (edit.body !== undefined) throw badRequest('invalid_argument', 'body is not an argument of str_replace', 'body');
    if (edit.old_str === undefined || edit.old_str === '') throw badRequest('invalid_argument', 'old_str is required for str_replace', 'old_str');
  } else {
    for (const f of ['old_str', 'new_str'] as const) {
      if (edit[f] !== undefined) throw badRequest('invalid_argument', `${f} is an argument of str_replace only, not of ${mode}`, f);
    }
    if (edit.body === undefined && edit.frontmatter === undefined) throw badRequest('invalid_argument', `${mode} needs body or frontmatter`, 'body');
    if (mode === 'replace' && edit.body !== undefined && startsWithFence(edit.body)) {
      throw badRequest('invalid_argument', 'body may not start with a front-matter fence (---); pass frontmatter as an object', 'body');
    }
  }
  return mode;
}

/**
 * The note's text after the edit. A body-only edit keeps the raw front matter verbatim; front matter
 * merges shallowly. Pure, so a rebased write can re-apply it to the note as it is at the new head.
 */
export function applyEdit(old: string, mode: EditMode, edit: NoteEdit, frontmatter: FrontMatter | undefined, limits: MemoryLimits): string {
  const split = trySplit(old) ?? { yaml: null, head: '', body: old };
  let body = split.body;
  if (mode === 'replace' && edit.body !== undefined) body = edit.body;
  else if (mode === 'append' && edit.body !== undefined) body = body === '' || body.endsWith('\n') ? body + edit.body : `${body}\n${edit.body}`;
  else if (mode === 'str_replace') {
    const needle = edit.old_str as string;
    const first = body.indexOf(needle);
    if (first < 0) throw badRequest('no_unique_match', 'old_str does not occur in the body', 'old_str');
    // Overlapping occurrences count too: either one could be the one meant.
    if (body.indexOf(needle, first + 1) >= 0) throw badRequest('no_unique_match', 'old_str occurs more than once in the body; include more context', 'old_str');
    body = body.slice(0, first) + (edit.new_str ?? '') + body.slice(first + needle.length);
  }
  let head = split.head;
  if (frontmatter !== undefined) {
    const current = split.yaml === null ? {} : parseNoteStrict(old, limits).frontmatter;
    const merged = { ...current, ...frontmatter };
    head = Object.keys(merged).length === 0 ? '' : composeNote(merged, '');
  }
  if (head === '' && startsWithFence(body)) {
    throw badRequest('invalid_argument', 'the edited body would start with a front-matter fence (---)', 'body');
  }
  return head + body;
}

/** Tag arguments: bare, trimmed, deduplicated and sorted (sorted, so cursors of one query agree). */
export function tagArgs(tags: readonly string[] | undefined, limits: MemoryLimits): string[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags)) throw badRequest('invalid_argument', 'tags must be a list of strings', 'tags');
  if (tags.length > limits.maxTagArgs) throw badRequest('invalid_argument', `at most ${limits.maxTagArgs} tags`, 'tags');
  const out: string[] = [];
  for (const raw of tags) {
    const t = typeof raw === 'string' ? raw.trim() : '';
    if (t === '') throw badRequest('invalid_argument', 'tags may not be empty', 'tags');
    if (t.startsWith('#')) throw badRequest('invalid_argument', 'tags are bare names, without a leading #', 'tags');
    if (t.length > 100) throw badRequest('invalid_argument', 'a tag is at most 100 characters', 'tags');
    if (!out.includes(t)) out.push(t);
  }
  return out.sort();
}

export function pageSize(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) throw badRequest('invalid_argument', `limit must be an integer from 1 to ${max}`, 'limit');
  return value;
}

/**
 * An expected rev (a precondition on the head): a commit sha of 40 hex characters, lower-cased;
 * undefined is no precondition. Transports turn their own syntax (If-Match) into this first.
 */
export function checkExpectedRev(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{40}$/.test(value))
    throw badRequest('invalid_rev', 'expectedRev must be a rev (40 hex characters)', 'expectedRev');
  return value.toLowerCase();
}
