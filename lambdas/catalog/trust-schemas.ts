import * as z from 'zod';
import '../shared/zod-openapi';
import { CHECK_RESULTS, FAILURE_KINDS, HEALTH_WINDOWS, intParam, TOOL_LINT_RULES } from '../catalog-core';

/** The trust surfaces of `/api/mcps/{slug}/…`: health over time and the changelog (README, "Trust over time"). */
const WINDOW_NAMES = Object.keys(HEALTH_WINDOWS) as [keyof typeof HEALTH_WINDOWS, ...Array<keyof typeof HEALTH_WINDOWS>];

const Percent = z.number().min(0).max(100).nullable();

export const HealthSummary = z
  .object({
    uptime: z
      .object({ '24h': Percent, '7d': Percent, '30d': Percent })
      .openapi({ description: 'Share of checks that answered (up or auth required), percent with one decimal; null without checks in the window.' }),
    latencyMs: z.object({ p50: z.number().int(), p95: z.number().int() }).optional().openapi({ description: 'Over the answered checks of 30 days.' }),
    lastFailure: z
      .object({ at: z.iso.datetime(), kind: z.enum(FAILURE_KINDS) })
      .optional()
      .openapi({ description: 'The last failed check of 30 days.' }),
    consecutiveFailures: z.number().int().min(0),
    down: z.boolean().openapi({ description: 'The last checks (3 by default) all failed.' }),
    checks: z.number().int().min(0).openapi({ description: 'Checks in the last 30 days.' }),
    lastCheckedAt: z.iso.datetime().optional(),
  })
  .openapi('HealthSummary');

export const HealthCheckOut = z
  .object({
    at: z.iso.datetime(),
    result: z.enum(CHECK_RESULTS).openapi({ description: '`up` (answered and listed tools), `auth` (answered 401/403), `down`.' }),
    kind: z.enum(FAILURE_KINDS).optional().openapi({ description: 'Why a `down` check failed.' }),
    status: z.number().int().optional(),
    latencyMs: z.number().int().optional(),
    toolCount: z.number().int().optional(),
  })
  .openapi('HealthCheck');

export const HealthQuerySchema = z.object({
  window: z
    .enum(WINDOW_NAMES, { error: `must be one of ${WINDOW_NAMES.join(', ')}` })
    .default('7d')
    .openapi({ description: 'The window of checks returned, ending now.' }),
});

export const HealthSeries = z
  .object({
    slug: z.string(),
    window: z.enum(WINDOW_NAMES),
    summary: HealthSummary,
    checks: z.array(HealthCheckOut).openapi({ description: 'The checks of the window, oldest first.' }),
  })
  .openapi('HealthSeries');

export const ToolChangeOut = z
  .object({
    kind: z.enum(['added', 'removed', 'renamed', 'schema']).openapi({ description: '`schema`: the same tool, another input schema.' }),
    tool: z.string(),
    from: z.string().optional().openapi({ description: 'The old name of a renamed tool (same input schema, new name).' }),
    breaking: z.boolean(),
    reasons: z.array(z.string()).optional().openapi({ description: 'Why a schema change is breaking: JSON paths of what a caller can no longer send.' }),
  })
  .openapi('ToolChange');

export const ChangeEntryOut = z
  .object({
    at: z.iso.datetime().openapi({ description: 'When the change was seen, or the registry publish time of a version.' }),
    kind: z.enum(['tools', 'version']),
    breaking: z
      .boolean()
      .openapi({ description: 'A tool disappeared, or an input schema accepts less (a new required parameter, a narrower type, an enum lost values).' }),
    changes: z.array(ToolChangeOut).optional(),
    version: z.object({ from: z.string(), to: z.string() }).optional(),
  })
  .openapi('ChangeEntry');

export const ChangesQuerySchema = z.object({
  cursor: z.string().min(1).max(200).optional().openapi({ description: 'The `meta.nextCursor` of the previous page.' }),
  limit: intParam(1, 100, 20, 'Entries per page.'),
});

export const ChangesMeta = z.object({ nextCursor: z.string().optional() });

export const DescriptionReportOut = z
  .object({
    grade: z.enum(['A', 'B', 'C', 'D', 'F']).nullable(),
    score: z.number().int().min(0).max(100).nullable(),
    findings: z.array(z.object({ tool: z.string(), rule: z.enum(TOOL_LINT_RULES), message: z.string() })),
  })
  .openapi('DescriptionReport');
