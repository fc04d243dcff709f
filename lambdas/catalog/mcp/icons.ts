import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * Icons of the server and its tools (MCP 2025-11-25 `icons`), as `data:` URIs: they travel with
 * `initialize` and `tools/list` themselves, so they show the same behind any host name, locally and
 * in AWS, and a client fetches nothing to draw them. 24-pixel stroke drawings, which scale.
 */
type Icons = NonNullable<Tool['icons']>;

function svgIcon(paths: string): Icons {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#1f6feb" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${paths}</svg>`;
  return [{ src: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`, mimeType: 'image/svg+xml', sizes: ['any'] }];
}

export const ICONS = {
  /** A catalog: a stack of cards. */
  server: svgIcon('<rect x="3" y="4" width="18" height="5" rx="1"/><rect x="3" y="11" width="18" height="5" rx="1"/><path d="M7 20h10"/>'),
  /** A magnifier. */
  search: svgIcon('<circle cx="11" cy="11" r="7"/><path d="m20 20-4-4"/>'),
  /** A page with lines. */
  detail: svgIcon('<path d="M6 3h9l3 3v15H6z"/><path d="M9 10h6M9 14h6M9 18h4"/>'),
  /** A download arrow into a tray. */
  install: svgIcon('<path d="M12 3v12"/><path d="m7 10 5 5 5-5"/><path d="M4 17v3h16v-3"/>'),
  /** Tags. */
  categories: svgIcon('<path d="M3 12V4h8l9 9-8 8z"/><circle cx="7.5" cy="7.5" r="1.5"/>'),
} as const;
