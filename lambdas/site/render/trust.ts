import { isUp, percentile, type CatalogRecord, type ChangeEntry, type DescriptionReport, type HealthCheck } from '../../catalog-core';
import type { SiteConfig } from '../config';
import { displayTitle, serverPath } from './components';
import { fullNumber, isoDate, plural } from './format';
import { escapeXml, html, type SafeHtml } from './html';
import { absolute } from './layout';

/**
 * A server's history on its page and in its feed: the uptime and latency chart (server-rendered
 * SVG, one column per day of the last 30, no script), the "Changes" section, the description grade's
 * findings, and the per-server Atom feed of its changes.
 */

const DAY = 86_400_000;
const DAYS = 30;

export interface DayFigures {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  checks: number;
  /** Percent with one decimal; null for a day without checks. */
  uptime: number | null;
  /** Median latency of the day's answered checks. */
  latencyMs?: number;
}

/** The last 30 UTC days (today last), each with its checks' uptime and median latency. */
export function dailyFigures(checks: HealthCheck[], now: number): DayFigures[] {
  const today = Math.floor(now / DAY);
  const days = Array.from({ length: DAYS }, (_, i) => ({ n: today - DAYS + 1 + i, checks: [] as HealthCheck[] }));
  for (const c of checks) {
    const slot = days[Math.floor(Date.parse(c.at) / DAY) - (today - DAYS + 1)];
    if (slot) slot.checks.push(c);
  }
  return days.map(({ n, checks: cs }) => {
    const latencies = cs.filter(isUp).flatMap((c) => (c.latencyMs === undefined ? [] : [c.latencyMs]));
    const up = cs.filter(isUp).length;
    return {
      day: new Date(n * DAY).toISOString().slice(0, 10),
      checks: cs.length,
      uptime: cs.length === 0 ? null : Math.round((up / cs.length) * 1000) / 10,
      ...(latencies.length > 0 && {
        latencyMs: percentile(
          [...latencies].sort((a, b) => a - b),
          50,
        ),
      }),
    };
  });
}

const W = 600;
const H = 140;
const PAD = 24;

/** The chart: bars of each day's uptime (0-100%), and a line of its median latency on its own scale. */
function chartSvg(days: DayFigures[], title: string): SafeHtml {
  const step = (W - PAD) / days.length;
  const plotH = H - PAD;
  const maxLatency = Math.max(1, ...days.map((d) => d.latencyMs ?? 0));
  const bars = days.map((d, i) => {
    if (d.uptime === null) return html``;
    const h = Math.max(2, (d.uptime / 100) * plotH);
    const level = d.uptime >= 99 ? 'good' : d.uptime >= 90 ? 'fair' : 'poor';
    return html`<rect class="bar bar-${level}" x="${(PAD + i * step + 1).toFixed(1)}" y="${(plotH - h).toFixed(1)}" width="${(step - 2).toFixed(1)}" height="${h.toFixed(1)}"></rect>`;
  });
  const points = days
    .map((d, i) =>
      d.latencyMs === undefined ? undefined : `${(PAD + i * step + step / 2).toFixed(1)},${(plotH - (d.latencyMs / maxLatency) * plotH).toFixed(1)}`,
    )
    .filter((p): p is string => p !== undefined);
  return html`<svg class="uptime-chart" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-labelledby="uptime-chart-title uptime-chart-desc" focusable="false">
<title id="uptime-chart-title">${title}</title>
<desc id="uptime-chart-desc">Bars: the share of checks that answered each day, from 0 to 100%. Line: the median time to an answer each day, up to ${fullNumber(maxLatency)} ms. The table below gives the same figures.</desc>
<line class="axis" x1="${PAD}" y1="${plotH}" x2="${W}" y2="${plotH}"></line>
<text class="axis-label" x="0" y="10">100%</text><text class="axis-label" x="0" y="${plotH}">0%</text>
<text class="axis-label" x="${PAD}" y="${H - 6}">${days[0]?.day ?? ''}</text><text class="axis-label" x="${W}" y="${H - 6}" text-anchor="end">${days.at(-1)?.day ?? ''}</text>
${bars}
${points.length > 1 ? html`<polyline class="latency" points="${points.join(' ')}"></polyline>` : ''}
</svg>`;
}

/** The "Uptime" part of the Health section: the summary, the chart and its table (the text alternative). */
export function uptimeSection(r: CatalogRecord, checks: HealthCheck[], now: number): SafeHtml {
  const s = r.healthHistory;
  if (!s || s.checks === 0) return html``;
  const days = dailyFigures(checks, now);
  const pct = (v: number | null) => (v === null ? '–' : `${v}%`);
  return html`<h3 id="uptime-title">Uptime and latency, last ${DAYS} days</h3>
<dl class="facts-list uptime-summary">
<dt>Uptime</dt><dd>${pct(s.uptime['24h'])} over 24 hours, ${pct(s.uptime['7d'])} over 7 days, ${pct(s.uptime['30d'])} over 30 days <span class="muted">(${plural(s.checks, 'check')})</span></dd>
${s.latencyMs ? html`<dt>Latency</dt><dd>${fullNumber(s.latencyMs.p50)} ms median, ${fullNumber(s.latencyMs.p95)} ms at the 95th percentile</dd>` : ''}
${s.lastFailure ? html`<dt>Last failure</dt><dd><time datetime="${s.lastFailure.at}">${isoDate(s.lastFailure.at)}</time> (${s.lastFailure.kind})</dd>` : ''}
${s.down ? html`<dt>Status</dt><dd><span class="status down">Down: its last ${plural(s.consecutiveFailures, 'check')} failed</span></dd>` : ''}
</dl>
<figure class="chart">
${chartSvg(days, `Daily uptime and median latency of ${displayTitle(r)}, last ${DAYS} days`)}
<figcaption>
<details><summary>The chart's figures, day by day</summary>
<div class="table-wrap" role="region" aria-label="Daily uptime table" tabindex="0"><table><caption class="sr-only">Daily uptime and median latency</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Checks</th><th scope="col">Uptime</th><th scope="col">Median latency</th></tr></thead>
<tbody>${days
    .filter((d) => d.checks > 0)
    .map(
      (d) =>
        html`<tr><th scope="row">${d.day}</th><td>${d.checks}</td><td>${pct(d.uptime)}</td><td>${d.latencyMs === undefined ? '–' : `${fullNumber(d.latencyMs)} ms`}</td></tr>`,
    )}</tbody></table></div>
</details>
</figcaption>
</figure>`;
}

/** One change entry in words. */
export function changeText(e: ChangeEntry): string {
  if (e.kind === 'version') return `Version ${e.version?.from ?? '?'} → ${e.version?.to ?? '?'}`;
  return (e.changes ?? [])
    .map((c) => {
      const what = c.kind === 'renamed' ? `${c.from} renamed to ${c.tool}` : c.kind === 'schema' ? `${c.tool}: input schema changed` : `${c.tool} ${c.kind}`;
      return `${what}${c.breaking ? ' (breaking)' : ''}`;
    })
    .join('; ');
}

/** The "Changes" section: the newest entries, breaking ones marked, with the feed and the API to read on. */
export function changesSection(slug: string, entries: ChangeEntry[], more: boolean): SafeHtml {
  const feed = `${serverPath(slug)}/feed.xml`;
  const api = `/api/mcps/${encodeURIComponent(slug)}/changes`;
  const links = html`<p class="muted">Follow them: <a href="${feed}">Atom feed of this server's changes</a> · as JSON: <a href="${api}">${api}</a>.</p>`;
  if (entries.length === 0) return html`<p>No change seen yet: the first capture of its tools is the baseline.</p>${links}`;
  return html`<ol class="changes">${entries.map(
    (e) =>
      html`<li class="change${e.breaking ? ' change-breaking' : ''}"><time datetime="${e.at}">${isoDate(e.at)}</time> ${e.breaking ? html`<span class="badge badge-warn">Breaking</span> ` : ''}${
        e.kind === 'version'
          ? html`Version <code>${e.version?.from ?? '?'}</code> → <code>${e.version?.to ?? '?'}</code>`
          : html`<ul>${(e.changes ?? []).map(
              (c) =>
                html`<li>${c.kind === 'renamed' ? html`<code>${c.from ?? ''}</code> renamed to <code>${c.tool}</code>` : html`<code>${c.tool}</code> ${c.kind === 'schema' ? 'input schema changed' : c.kind}`}${c.breaking ? html` <strong>(breaking${c.reasons?.length ? `: ${c.reasons.join(', ')}` : ''})</strong>` : ''}</li>`,
            )}</ul>`
      }</li>`,
  )}</ol>${more ? html`<p class="note">Older changes are in the feed and the API.</p>` : ''}${links}`;
}

export const DESCRIPTION_GRADE_TEXT = {
  A: 'Its tools are described well enough for a model to pick and call them.',
  B: 'Mostly well described; a few parameters or hints are missing.',
  C: 'Usable, with gaps a model may trip over.',
  D: 'Poorly described: expect wrong calls.',
  F: 'Tools without descriptions or types.',
} as const;

/** The description grade's findings, under the grades table. */
export function descriptionFindings(report: DescriptionReport): SafeHtml {
  if (report.findings.length === 0) return html``;
  const shown = report.findings.slice(0, 50);
  return html`<details class="findings"><summary>Tool description findings (${fullNumber(report.findings.length)}; score ${report.score ?? '–'} of 100)</summary>
<ul>${shown.map((f) => html`<li><code>${f.tool}</code>: ${f.message} <span class="muted">(${f.rule})</span></li>`)}</ul>
${report.findings.length > shown.length ? html`<p class="note">The rest are in the catalog API.</p>` : ''}
</details>`;
}

/** An Atom entry of a change: its id is stable (server, time, content), its link the server's page. */
export function changeAtomEntry(config: SiteConfig, r: Pick<CatalogRecord, 'slug' | 'name' | 'title'>, e: ChangeEntry): string {
  const url = absolute(config, serverPath(r.slug));
  const title = `${displayTitle(r)}: ${e.breaking ? 'breaking change' : e.kind === 'version' ? 'new version' : 'tools changed'}`;
  return `<entry>
<id>${escapeXml(`${url}#change-${e.at}-${e.kind}`)}</id>
<title>${escapeXml(title)}</title>
<link rel="alternate" type="text/html" href="${escapeXml(url)}"/>
<updated>${escapeXml(e.at)}</updated>
<author><name>${escapeXml(r.name.split('/')[0] ?? r.name)}</name></author>
${e.breaking ? '<category term="breaking"/>' : ''}
<summary type="text">${escapeXml(changeText(e))}</summary>
</entry>`;
}

/** `/servers/{slug}/feed.xml`: a server's changes, newest first (Atom, RFC 4287). */
export function serverChangesFeed(config: SiteConfig, r: CatalogRecord, entries: ChangeEntry[], now: number): string {
  const self = absolute(config, `${serverPath(r.slug)}/feed.xml`);
  const updated = entries[0]?.at ?? r.crawledAt ?? new Date(now).toISOString();
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<id>${escapeXml(self)}</id>
<title>${escapeXml(`${config.siteName}: changes of ${displayTitle(r)}`)}</title>
<subtitle>Tools added, removed, renamed or changed, and new versions, newest first; breaking changes are marked.</subtitle>
<link rel="self" type="application/atom+xml" href="${escapeXml(self)}"/>
<link rel="alternate" type="text/html" href="${escapeXml(absolute(config, serverPath(r.slug)))}"/>
<updated>${escapeXml(updated)}</updated>
<author><name>${escapeXml(config.siteName)}</name></author>
<generator>${escapeXml(config.siteName)}</generator>
${entries.map((e) => changeAtomEntry(config, r, e)).join('\n')}
</feed>
`;
}
