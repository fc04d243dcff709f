import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectMemoryError, inMemoryService } from '../support/memory-harness';

/**
 * The credential refusal against two corpora (`test/fixtures/credentials`): the evasions a probe
 * used to store credentials past the scan (invisible characters, wrapped lines, labels on the line
 * before, encodings, paths), of which none may be stored, through every way a note is named (PUT,
 * move); and ordinary notes (code, hashes, UUIDs, git shas, base64 images, long words, URLs, tables),
 * every one of which must be stored. `npm run bench -- credentials` reports both rates and the cost.
 */
const FIXTURES = join(__dirname, '..', 'fixtures', 'credentials');
interface Evasion {
  kind: string;
  text: string;
  path?: string;
  moveTo?: string;
}
const { evasions } = JSON.parse(readFileSync(join(FIXTURES, 'evasions.json'), 'utf8')) as { evasions: Evasion[] };
const ordinary = readdirSync(join(FIXTURES, 'ordinary')).map((f) => [f, readFileSync(join(FIXTURES, 'ordinary', f), 'utf8')] as const);
const me = { account: 'corpus' };

test('the corpora are the size the issue asks for', () => {
  expect(evasions.length).toBeGreaterThanOrEqual(50);
  expect(ordinary.length).toBeGreaterThanOrEqual(30);
});

describe('evasions: 0 stored', () => {
  test.each(evasions.map((e) => [e.kind, e] as const))('%s', async (_kind, e) => {
    const svc = inMemoryService();
    await svc.createMemory(me, 'm');
    if (e.moveTo !== undefined) {
      await svc.writeNote(me, 'm', 'plain.md', { markdown: e.text });
      const err = await expectMemoryError(svc.moveNote(me, 'm', { from: 'plain.md', to: e.moveTo }), 'BAD_REQUEST', 'refused_content');
      expect(err.message).not.toContain(e.moveTo.split('/').find((s) => s.length > 16) ?? '\u0000');
      await expectMemoryError(svc.readNote(me, 'm', e.moveTo), 'NOT_FOUND');
      return;
    }
    const path = e.path ?? 'note.md';
    await expectMemoryError(svc.writeNote(me, 'm', path, { markdown: e.text }), 'BAD_REQUEST', 'refused_content');
    expect((await svc.getMemory(me, 'm')).files).toBe(0);
  });
});

describe('ordinary notes: all stored', () => {
  test.each(ordinary)('%s', async (file, text) => {
    const svc = inMemoryService();
    await svc.createMemory(me, 'm');
    await svc.writeNote(me, 'm', `notes/${file}`, { markdown: text });
    expect((await svc.readNote(me, 'm', `notes/${file}`)).markdown).toBe(text);
  });
});
