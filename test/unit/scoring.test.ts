import { isOfficialNamespace, licenseGrade, maintenanceGrade, popularityScore, POPULARITY_WEIGHTS, REPUBLISHER_NAMESPACES } from '../../lambdas/catalog-core';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeUnless } from '../support/skips';

const NOW = new Date('2026-11-01T00:00:00.000Z');
const DAY = 86_400_000;
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString();

describe('licenseGrade', () => {
  it.each([
    // A: permissive, SPDX ids and GitHub names
    ['MIT', 'A'],
    ['MIT License', 'A'],
    ['mit', 'A'],
    ['Apache-2.0', 'A'],
    ['Apache License 2.0', 'A'],
    ['BSD-3-Clause', 'A'],
    ['BSD 3-Clause "New" or "Revised" License', 'A'],
    ['BSD-2-Clause', 'A'],
    ['BSD 2-Clause "Simplified" License', 'A'],
    ['BSD-3-Clause-Clear', 'A'],
    ['ISC', 'A'],
    ['ISC License', 'A'],
    ['0BSD', 'A'],
    ['BSD Zero Clause License', 'A'],
    ['Unlicense', 'A'],
    ['The Unlicense', 'A'],
    // B: weak copyleft
    ['MPL-2.0', 'B'],
    ['Mozilla Public License 2.0', 'B'],
    ['LGPL-3.0', 'B'],
    ['LGPL-2.1-only', 'B'],
    ['LGPL-3.0-or-later', 'B'],
    ['GNU Lesser General Public License v2.1', 'B'],
    ['GNU Lesser General Public License v3.0', 'B'],
    ['EPL-2.0', 'B'],
    ['Eclipse Public License 2.0', 'B'],
    // C: strong copyleft
    ['GPL-3.0', 'C'],
    ['GPL-2.0-only', 'C'],
    ['GPL-3.0-or-later', 'C'],
    ['GPL-2.0+', 'C'],
    ['GNU General Public License v3.0', 'C'],
    ['GNU General Public License v2.0', 'C'],
    ['AGPL-3.0', 'C'],
    ['AGPL-3.0-only', 'C'],
    ['GNU Affero General Public License v3.0', 'C'],
    // D: other or custom
    ['NOASSERTION', 'D'],
    ['Other', 'D'],
    ['SSPL-1.0', 'D'],
    ['Proprietary', 'D'],
    ['Creative Commons Attribution 4.0 International', 'D'],
  ])('%s → %s', (license, grade) => {
    expect(licenseGrade(license, true)).toBe(grade);
  });

  it('is F when a repository declares no license', () => {
    expect(licenseGrade(undefined, true)).toBe('F');
    expect(licenseGrade('', true)).toBe('F');
    expect(licenseGrade('   ', true)).toBe('F');
  });

  it('is null without a repository, whatever the license', () => {
    expect(licenseGrade(undefined, false)).toBeNull();
    expect(licenseGrade('MIT', false)).toBeNull();
    expect(licenseGrade('GPL-3.0', false)).toBeNull();
  });

  it('reads SPDX expressions: best of OR, worst of AND, WITH keeps the base', () => {
    expect(licenseGrade('MIT OR GPL-3.0', true)).toBe('A');
    expect(licenseGrade('(GPL-2.0-only OR MPL-2.0)', true)).toBe('B');
    expect(licenseGrade('MIT AND GPL-3.0', true)).toBe('C');
    expect(licenseGrade('Apache-2.0 AND (MIT OR GPL-3.0)', true)).toBe('A');
    expect(licenseGrade('GPL-2.0-only WITH Classpath-exception-2.0', true)).toBe('C');
  });
});

describe('maintenanceGrade', () => {
  it.each([
    [0, 'A'],
    [1, 'A'],
    [30 * DAY, 'A'],
    [30 * DAY + 1, 'B'],
    [90 * DAY, 'B'],
    [90 * DAY + 1, 'C'],
    [180 * DAY, 'C'],
    [180 * DAY + 1, 'D'],
    [365 * DAY, 'D'],
    [365 * DAY + 1, 'F'],
    [3 * 365 * DAY, 'F'],
  ])('pushed %d ms ago → %s', (ms, grade) => {
    expect(maintenanceGrade(ago(ms), NOW)).toBe(grade);
  });

  it('treats a push in the future (clock skew) as recent', () => {
    expect(maintenanceGrade(new Date(NOW.getTime() + DAY).toISOString(), NOW)).toBe('A');
  });

  it('is null when unknown or unparsable', () => {
    expect(maintenanceGrade(undefined, NOW)).toBeNull();
    expect(maintenanceGrade('', NOW)).toBeNull();
    expect(maintenanceGrade('yesterday', NOW)).toBeNull();
  });
});

describe('popularityScore', () => {
  const base = { isOfficial: false };

  it('is 0 with nothing known and 1 at saturation', () => {
    expect(popularityScore(base, NOW)).toBe(0);
    expect(popularityScore({ stars: 1e5, downloads: 1e7, live: true, pushedAt: NOW.toISOString(), isOfficial: true }, NOW)).toBe(1);
    expect(popularityScore({ stars: 1e9, downloads: 1e12, live: true, pushedAt: NOW.toISOString(), isOfficial: true }, NOW)).toBe(1);
  });

  it('weights sum to 1 and each term contributes its weight at saturation', () => {
    const sum = Object.values(POPULARITY_WEIGHTS).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 12);
    expect(popularityScore({ ...base, stars: 99_999 }, NOW)).toBeCloseTo(0.45, 5);
    expect(popularityScore({ ...base, downloads: 9_999_999 }, NOW)).toBeCloseTo(0.35, 5);
    expect(popularityScore({ ...base, live: true }, NOW)).toBe(0.1);
    expect(popularityScore({ ...base, pushedAt: NOW.toISOString() }, NOW)).toBe(0.05);
    expect(popularityScore({ isOfficial: true }, NOW)).toBe(0.05);
  });

  it('decays recency linearly over a year', () => {
    expect(popularityScore({ ...base, pushedAt: ago((365 * DAY) / 2) }, NOW)).toBeCloseTo(0.025, 6);
    expect(popularityScore({ ...base, pushedAt: ago(365 * DAY) }, NOW)).toBe(0);
    expect(popularityScore({ ...base, pushedAt: ago(900 * DAY) }, NOW)).toBe(0);
  });

  it('is rounded to 6 decimals and stays within [0, 1]', () => {
    for (const stars of [0, 1, 7, 123, 4567, 89_012]) {
      for (const downloads of [undefined, 0, 3, 999, 1_234_567]) {
        const s = popularityScore({ stars, downloads, live: stars % 2 === 0, pushedAt: ago(stars * 1000), isOfficial: stars > 100 }, NOW);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
        expect(Math.round(s * 1e6) / 1e6).toBe(s);
      }
    }
  });

  it('treats negative counts as zero', () => {
    expect(popularityScore({ ...base, stars: -5, downloads: -1 }, NOW)).toBe(0);
  });

  describe('is monotone in each input', () => {
    const ctx = { stars: 50, downloads: 2000, live: false, pushedAt: ago(100 * DAY), isOfficial: false };
    const nonDecreasing = (xs: number[]): void => {
      for (let i = 1; i < xs.length; i++) expect(xs[i]).toBeGreaterThanOrEqual(xs[i - 1]);
    };
    const steps = [0, 1, 2, 5, 10, 50, 100, 1_000, 10_000, 100_000, 1_000_000, 1e8];

    it('stars', () => nonDecreasing(steps.map((stars) => popularityScore({ ...ctx, stars }, NOW))));
    it('downloads', () => nonDecreasing(steps.map((downloads) => popularityScore({ ...ctx, downloads }, NOW))));
    it('recency', () => nonDecreasing([800, 400, 365, 300, 200, 100, 30, 1, 0].map((d) => popularityScore({ ...ctx, pushedAt: ago(d * DAY) }, NOW))));
    it('liveness', () => {
      expect(popularityScore({ ...ctx, live: true }, NOW)).toBeGreaterThan(popularityScore({ ...ctx, live: false }, NOW));
      expect(popularityScore({ ...ctx, live: undefined }, NOW)).toBe(popularityScore({ ...ctx, live: false }, NOW));
    });
    it('official', () => {
      expect(popularityScore({ ...ctx, isOfficial: true }, NOW)).toBeGreaterThan(popularityScore(ctx, NOW));
    });
    it('strictly for stars and downloads below saturation', () => {
      expect(popularityScore({ ...ctx, stars: 51 }, NOW)).toBeGreaterThan(popularityScore(ctx, NOW));
      expect(popularityScore({ ...ctx, downloads: 2100 }, NOW)).toBeGreaterThan(popularityScore(ctx, NOW));
    });
  });
});

describe('isOfficialNamespace', () => {
  // Names taken verbatim from the upstream registry sample (2025-10-21).
  it.each([
    ['app.getdialer/dialer', true],
    ['com.notion/mcp', true],
    ['com.supabase/mcp', true],
    ['com.figma.mcp/mcp', true],
    ['com.cloudflare.mcp/mcp', true],
    ['com.1stdibs/1stDibs', true],
    ['garden.stanislav.svelte-llm/svelte-llm-mcp', true],
    ['net.gepuro.mcp-company-lens-v1/company-lens-mcp-registry', true],
    // Publish their own code or their own hosted gateways: not re-publishers.
    ['com.pulsemcp.servers/pulse-fetch', true],
    ['com.mintmcp/gmail', true],
    ['ai.waystation/slack', true],
    ['io.github.opencontext-team/mcp-server', false],
    ['io.github.LinuxSuRen/atest-mcp-server', false],
    ['io.github.GLips/Figma-Context-MCP', false],
    ['ai.smithery/arjunkmrm-perplexity-search', false],
    ['ai.smithery/arjunkmrm-lta-mcp', false],
  ])('%s → %s', (name, official) => {
    expect(isOfficialNamespace(name)).toBe(official);
  });

  it('rejects names that are not reverse-DNS namespaced', () => {
    expect(isOfficialNamespace('weather')).toBe(false);
    expect(isOfficialNamespace('/weather')).toBe(false);
    expect(isOfficialNamespace('localhost/weather')).toBe(false);
    expect(isOfficialNamespace('io.github/weather')).toBe(false);
    expect(isOfficialNamespace('com..acme/weather')).toBe(false);
    expect(isOfficialNamespace('com.-acme/weather')).toBe(false);
  });

  it('treats sub-namespaces of re-publishers like the re-publisher', () => {
    expect(REPUBLISHER_NAMESPACES).toContain('ai.smithery');
    expect(isOfficialNamespace('ai.smithery.eu/x')).toBe(false);
    expect(isOfficialNamespace('AI.Smithery/x')).toBe(false);
    // A different domain that merely starts with the same letters is its own publisher.
    expect(isOfficialNamespace('ai.smitheryfan/x')).toBe(true);
  });

  const samplePath = join(__dirname, '../../../shared/reference/registry/samples/mcp-insights-servers-2025-10-21.json');
  const sampleDescribe = describeUnless(existsSync(samplePath) ? undefined : `${samplePath} is absent (../shared is not checked out)`, {
    id: 'shared:scoring-sample',
    what: 'grades and popularity over the whole registry sample',
  });

  sampleDescribe('over the whole upstream sample', () => {
    it('io.github and ai.smithery are never official, every other namespace is', () => {
      // The file starts with a UTF-8 BOM, which JSON.parse rejects.
      const rows = JSON.parse(readFileSync(samplePath, 'utf8').replace(/^\uFEFF/, '')) as Array<{ server: { name: string } }>;
      expect(rows.length).toBeGreaterThan(1000);
      for (const { server } of rows) {
        const ns = server.name.split('/')[0];
        const expected = !ns.startsWith('io.github.') && ns !== 'ai.smithery';
        expect([server.name, isOfficialNamespace(server.name)]).toEqual([server.name, expected]);
      }
    });
  });
});
