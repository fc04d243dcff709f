import { readFileSync } from 'node:fs';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { toolList } from '../../lambdas/mcp/server';
import { nonAdditiveChanges } from '../support/additive';
import { checkContract } from '../support/contract-snapshot';

/**
 * The six tool schemas are frozen (spec 3): `tools/list` is compared with the committed snapshot
 * `test/fixtures/contracts/mcp-tools.json`; anything but an addition fails. `UPDATE_CONTRACTS=1`
 * records an additive change. Arguments are stricter than the generic rule: a tool may not start
 * requiring an argument old clients do not send.
 */
const current = { tools: toolList() };

it('changes tools/list only by additions', () => {
  const { problems, snapshotPath } = checkContract('mcp-tools', current);
  expect({ snapshotPath, problems }).toEqual({ snapshotPath, problems: [] });
});

it('requires no argument the snapshot did not require', () => {
  const { snapshotPath } = checkContract('mcp-tools', current);
  const frozen = JSON.parse(readFileSync(snapshotPath, 'utf8')) as { tools: Tool[] };
  for (const old of frozen.tools) {
    const now = current.tools.find((t) => t.name === old.name);
    expect(now).toBeDefined();
    const added = (now?.inputSchema.required ?? []).filter((r) => !(old.inputSchema.required ?? []).includes(r));
    expect({ tool: old.name, added }).toEqual({ tool: old.name, added: [] });
  }
});

it('would catch a renamed argument, a removed result field and a narrowed enum', () => {
  // JSON surgery on a copy of the list: loosely typed on purpose.
  // biome-ignore lint/suspicious/noExplicitAny: the edits reach into arbitrary JSON Schema
  type Json = Record<string, any>;
  const mutate = (edit: (tools: Json[]) => void): string[] => {
    const copy = JSON.parse(JSON.stringify(current)) as { tools: Json[] };
    edit(copy.tools);
    return nonAdditiveChanges(current, copy);
  };
  expect(
    mutate((t) => {
      const props = t[1].inputSchema.properties;
      props.file = props.path;
      delete props.path;
    }),
  ).not.toEqual([]);
  expect(mutate((t) => delete t[0].outputSchema.properties.results.items.properties.score)).not.toEqual([]);
  expect(mutate((t) => t[4].inputSchema.properties.mode.enum.pop())).not.toEqual([]);
  expect(mutate((t) => (t[2].inputSchema.properties.depth.maximum = 3))).not.toEqual([]);
  // Additions pass: a new optional argument, a new result field, a new error code.
  expect(mutate((t) => (t[1].inputSchema.properties.asOf = { type: 'string' }))).toEqual([]);
  expect(mutate((t) => t[0].outputSchema.properties.error.properties.code.enum.push('too_large'))).toEqual([]);
});

it('gives every tool a title, a description, annotations and schemas that admit the error shape', () => {
  for (const t of current.tools) {
    expect(t.title).toBeTruthy();
    expect(t.annotations?.openWorldHint).toBe(false);
    expect(t.outputSchema?.anyOf).toEqual([{ required: expect.any(Array) }, { required: ['error'] }]);
    expect(JSON.stringify(t)).not.toMatch(/"\$schema"|"id":/);
  }
});
