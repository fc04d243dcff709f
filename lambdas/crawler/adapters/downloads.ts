import * as z from 'zod';
import type { DownloadsSource } from '../domain/ports';
import { bodyJson, type HttpClient } from '../http/http-client';

/**
 * Last-month downloads of npm and PyPI packages.
 *
 * - npm: `GET {NPM_DOWNLOADS_URL}/downloads/point/last-month/{package}` → `{ downloads }`
 *   (scoped names keep their `@scope/` prefix, as the npm API expects).
 * - PyPI: `GET {PYPI_STATS_URL}/api/packages/{package}/recent` → `{ data: { last_month } }`
 *   (pypistats.org; names are normalised per PEP 503: lowercase, runs of `-_.` become `-`).
 *
 * 404 means "unknown package" (undefined); anything else unexpected throws (a recorded failure).
 */

const npmSchema = z.object({ downloads: z.number() });
const pypiSchema = z.object({ data: z.object({ last_month: z.number() }) });

export function pep503(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

export class PackageDownloads implements DownloadsSource {
  constructor(private readonly o: { npmUrl: string; pypiUrl: string; http: HttpClient }) {}

  async npm(identifier: string): Promise<number | undefined> {
    const name = identifier.trim();
    if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) return undefined;
    const path = name.startsWith('@')
      ? `@${encodeURIComponent(name.slice(1).split('/')[0])}/${encodeURIComponent(name.split('/')[1])}`
      : encodeURIComponent(name);
    const res = await this.o.http.request(`${this.o.npmUrl.replace(/\/+$/, '')}/downloads/point/last-month/${path}`, {
      headers: { accept: 'application/json' },
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`npm downloads answered ${res.status} for ${name}`);
    return npmSchema.parse(bodyJson(res)).downloads;
  }

  async pypi(identifier: string): Promise<number | undefined> {
    const name = pep503(identifier.trim());
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) return undefined;
    const res = await this.o.http.request(`${this.o.pypiUrl.replace(/\/+$/, '')}/api/packages/${name}/recent`, {
      headers: { accept: 'application/json' },
    });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`PyPI stats answered ${res.status} for ${name}`);
    return pypiSchema.parse(bodyJson(res)).data.last_month;
  }
}
