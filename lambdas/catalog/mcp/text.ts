import type { CategoriesOut, InstallOut, SearchOut, ServerHit, ServerOut } from './schemas';

/**
 * The tools' results as text an agent (or its user) reads: the text content of each call. The
 * structured content carries the same facts as fields; this is what a client that shows only
 * `content` prints, so every slug, URL, snippet and input is in it.
 */

const fence = (language: string, text: string) => `\`\`\`${language === 'text' ? '' : language}\n${text}\n\`\`\``;

function facts(s: ServerHit): string {
  const grade = (label: string, g: string | null) => (g ? `${label} ${g}` : undefined);
  return [
    s.categories.join(', ') || undefined,
    s.transports.join(', ') || undefined,
    s.registryTypes.join(', ') || undefined,
    grade('license', s.grades.license),
    grade('maintenance', s.grades.maintenance),
    s.live === null ? undefined : s.live ? 'live' : 'not answering',
    s.toolCount !== undefined ? `${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}` : undefined,
    s.stars !== undefined ? `${s.stars} stars` : undefined,
    s.status === 'deprecated' ? 'DEPRECATED' : undefined,
    s.isOfficial ? 'official' : undefined,
    s.allowedInOrg === undefined ? undefined : s.allowedInOrg ? 'allowed in your organisation' : 'not allowed in your organisation',
    s.pinnedVersion !== undefined ? `pinned to ${s.pinnedVersion}` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
}

const heading = (s: ServerHit) => `${s.title ?? s.name} — ${s.name} (slug: ${s.slug})`;

export function searchText(out: SearchOut): string {
  if (out.servers.length === 0) {
    return out.total === 0
      ? `No server matches "${out.query}". Try fewer or other words, or drop the filters.`
      : `No more servers match "${out.query}" (${out.total} in all).`;
  }
  const scope = out.ranked === undefined ? '' : ` and are allowed in your organisation (among its ${out.ranked} best matches)`;
  const lines = [`${out.total} server${out.total === 1 ? '' : 's'} match "${out.query}"${scope}; ${out.servers.length} here, best first:`, ''];
  out.servers.forEach((s, i) => {
    lines.push(`${i + 1}. ${heading(s)}`, `   ${s.description}`, `   ${facts(s)}`);
    if (s.url) lines.push(`   ${s.url}`);
  });
  lines.push('', 'get_server with a slug shows its tools and packages; install_server gives the configuration for a client.');
  if (out.nextCursor) lines.push(`More: search_servers with the same arguments and cursor "${out.nextCursor}".`);
  return lines.join('\n');
}

function argumentsOf(schema: Record<string, unknown> | undefined): string {
  const props = schema?.properties;
  if (!props || typeof props !== 'object') return '';
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as unknown[]) : []);
  // Required arguments first: a stored schema's keys need not keep their order.
  const names = [
    ...Object.keys(props).filter((n) => required.has(n)),
    ...Object.keys(props)
      .filter((n) => !required.has(n))
      .map((n) => `${n}?`),
  ];
  return names.length ? `(${names.join(', ')})` : '()';
}

export function serverText(s: ServerOut): string {
  const lines = [heading(s), s.description, facts(s), `Version ${s.version}, updated ${s.updatedAt}.`];
  for (const [label, v] of [
    ['Page', s.url],
    ['Website', s.websiteUrl],
    ['Repository', s.repositoryUrl],
    ['License', s.license],
    ['Language', s.language],
  ] as const) {
    if (v) lines.push(`${label}: ${v}`);
  }
  if (s.health) {
    lines.push(`Health: ${s.health.live ? 'live' : 'not answering'} at ${s.health.checkedAt}${s.health.authRequired ? ' (asks for authorization)' : ''}.`);
  }
  if (s.remotes.length) lines.push('', 'Hosted endpoints:', ...s.remotes.map((m) => `- ${m.type} ${m.url}`));
  if (s.packages.length) {
    lines.push('', 'Packages:', ...s.packages.map((p) => `- ${p.registryType} ${p.identifier}${p.version ? ` ${p.version}` : ''} (${p.transport})`));
  }
  lines.push('', s.tools.length ? `Tools (${s.tools.length}):` : 'Tools: none captured.');
  for (const t of s.tools) lines.push(`- ${t.name}${argumentsOf(t.inputSchema)}${t.description ? `: ${t.description}` : ''}`);
  lines.push('', s.install.length ? 'Ways to install (install_server gives the configuration):' : 'No way to install is published.');
  for (const o of s.install) lines.push(`- ${o.title}`);
  if (s.readme) lines.push('', `README (${s.readme.path}${s.readme.truncated ? ', beginning' : ''}):`, s.readme.text);
  return lines.join('\n');
}

export function installText(out: InstallOut): string {
  if (out.options.length === 0) return `${out.name} publishes no package or hosted endpoint: there is nothing to install.`;
  const lines = [`Installing ${out.name} in ${out.client}: ${out.options.length} way${out.options.length === 1 ? '' : 's'}, the first preferred.`];
  for (const o of out.options) {
    lines.push('', `## ${o.title}`);
    if (o.start) lines.push(`First start it (${o.start.where}):`, fence(o.start.language, o.start.text));
    if (o.snippet)
      lines.push(o.snippet.where === 'Terminal' ? 'Run in a terminal:' : `Put this in ${o.snippet.where}:`, fence(o.snippet.language, o.snippet.text));
    for (const i of o.inputs) {
      const what = [i.kind, i.required ? 'required' : 'optional', ...(i.secret ? ['SECRET: ask the user, never store it in a shared file'] : [])].join(', ');
      const extra = [i.description, i.default !== undefined ? `default ${i.default}` : undefined, i.choices ? `one of ${i.choices.join(', ')}` : undefined]
        .filter(Boolean)
        .join('; ');
      lines.push(`- ${i.name} (${what})${extra ? `: ${extra}` : ''}`);
    }
    for (const n of o.notes) lines.push(`Note: ${n}`);
  }
  return lines.join('\n');
}

export function categoriesText(out: CategoriesOut): string {
  return [
    `${out.total} servers in ${out.categories.length} categories (pass a name as search_servers' category):`,
    ...out.categories.map((c) => `- ${c.name}: ${c.count}`),
  ].join('\n');
}
