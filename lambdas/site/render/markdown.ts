import type { RegistryRepository } from '../../catalog-core';
import type { MarkdownIt } from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';

/**
 * READMEs are markdown written by strangers, often with raw HTML in it (centred logos, badges,
 * `<details>`). markdown-it renders it with raw HTML on (so those READMEs look as their authors
 * meant), then sanitize-html keeps an allow-list of elements, attributes and URL schemes and drops
 * everything else: scripts, styles, frames, SVG and MathML, forms, event handlers, `style`
 * attributes, `javascript:`/`data:`/`vbscript:` URLs. The page's Content-Security-Policy (no inline
 * script or style) is the second wall behind it. Both libraries are kept by their communities and
 * are what GitHub-like renderers use; neither is something to write by hand.
 *
 * Links and images are rewritten: relative ones resolve against the repository (GitHub's blob and
 * raw URLs), links to other sites get `rel="noopener nofollow ugc"`, images load lazily without a
 * referrer. README headings move one level down (the page's own `<h1>` is the server's title) and
 * get `readme-` ids so in-page links work and cannot collide with the page's own ids.
 *
 * Both libraries load on the first README an instance renders, from their own file beside the
 * bundle (`markdown-libs.ts`): sanitize-html (with htmlparser2 and postcss) alone takes about 140 ms
 * to load and most of the site's bundle, which the home, list and search pages never need.
 */

interface Engines {
  md: MarkdownIt;
  sanitize: typeof sanitizeHtml;
}

let engines: Promise<Engines> | undefined;

type Libraries = typeof import('./markdown-libs');

function loadEngines(): Promise<Engines> {
  engines ??= Promise.resolve().then(() => {
    // A computed specifier, so esbuild leaves the libraries out of index.js: in AWS this finds
    // markdown-libs.js beside it (lib/site.ts), from source markdown-libs.ts.
    const libs = require(['.', 'markdown-libs'].join('/')) as Libraries;
    const md = new libs.MarkdownIt({ html: true, linkify: true, typographer: false });
    // Heading ids from their text, unique per document (`env.ids` counts repeats, as GitHub does).
    md.renderer.rules.heading_open = (tokens, idx, options, rawEnv, self) => {
      const env = rawEnv as { ids?: Map<string, number> } | undefined;
      const inline = tokens[idx + 1];
      const text = inline?.children?.map((t) => (t.type === 'text' || t.type === 'code_inline' ? t.content : '')).join('') ?? '';
      const base = slugify(text);
      if (base && env) {
        env.ids ??= new Map();
        const n = env.ids.get(base) ?? 0;
        env.ids.set(base, n + 1);
        tokens[idx].attrSet('id', `${ID_PREFIX}${n === 0 ? base : `${base}-${n}`}`);
      }
      return self.renderToken(tokens, idx, options);
    };
    return { md, sanitize: libs.sanitizeHtml };
  });
  return engines;
}

const ID_PREFIX = 'readme-';

function slugify(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-')
    .slice(0, 80);
}

export interface ReadmeContext {
  repository?: RegistryRepository;
  /** Path of the README in the repository (`README.md`, `packages/x/README.md`). */
  path?: string;
}

export interface RenderedReadme {
  html: string;
  /** The source was cut at the cap (here, or already by the crawler). */
  truncated: boolean;
}

/** Where relative links and images of a README point: GitHub's blob and raw URLs of its folder. */
interface Bases {
  link?: URL;
  image?: URL;
}

function basesOf(ctx: ReadmeContext): Bases {
  const repo = ctx.repository?.url;
  const m = repo ? /^https:\/\/github\.com\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(repo) : null;
  if (!m) return {};
  const folder = (ctx.path ?? 'README.md').split('/').slice(0, -1).join('/');
  const dir = folder ? `${folder.split('/').map(encodeURIComponent).join('/')}/` : '';
  return {
    link: new URL(`https://github.com/${m[1]}/${m[2]}/blob/HEAD/${dir}`),
    image: new URL(`https://raw.githubusercontent.com/${m[1]}/${m[2]}/HEAD/${dir}`),
  };
}

const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
const IMAGE_SCHEMES = new Set(['http:', 'https:']);

/** An absolute URL with an allowed scheme, or undefined (the attribute is then dropped). */
function resolveUrl(raw: string, base: URL | undefined, schemes: ReadonlySet<string>): string | undefined {
  const value = raw.trim();
  if (value === '') return undefined;
  let url: URL;
  try {
    // WHATWG parsing drops tabs and newlines and lower-cases the scheme, exactly as a browser would
    // read `jav&#x09;ascript:` or `JaVaScRiPt:`, so the scheme check sees what the browser would run.
    url = base ? new URL(value, base) : new URL(value);
  } catch {
    return undefined;
  }
  return schemes.has(url.protocol) ? url.href : undefined;
}

const SHIFT: Record<string, string> = { h1: 'h2', h2: 'h3', h3: 'h4', h4: 'h5', h5: 'h6', h6: 'h6' };

function headingTransform(tag: string): sanitizeHtml.Transformer {
  return (_name, attribs) => {
    const id = attribs.id;
    const kept: sanitizeHtml.Attributes = {};
    if (id?.startsWith(ID_PREFIX)) kept.id = id;
    return { tagName: SHIFT[tag] as string, attribs: kept };
  };
}

const NUMERIC = /^\d{1,4}$/;

function optionsFor(bases: Bases): sanitizeHtml.IOptions {
  return {
    allowedTags: [
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'p',
      'br',
      'hr',
      'a',
      'img',
      'ul',
      'ol',
      'li',
      'dl',
      'dt',
      'dd',
      'blockquote',
      'pre',
      'code',
      'kbd',
      'samp',
      'var',
      'em',
      'strong',
      'b',
      'i',
      'u',
      's',
      'del',
      'ins',
      'mark',
      'small',
      'sub',
      'sup',
      'abbr',
      'table',
      'thead',
      'tbody',
      'tfoot',
      'tr',
      'th',
      'td',
      'caption',
      'details',
      'summary',
      'div',
      'span',
    ],
    allowedAttributes: {
      a: ['href', 'title', 'rel'],
      img: ['src', 'alt', 'title', 'width', 'height', 'loading', 'decoding', 'referrerpolicy'],
      h2: ['id'],
      h3: ['id'],
      h4: ['id'],
      h5: ['id'],
      h6: ['id'],
      th: ['colspan', 'rowspan'],
      td: ['colspan', 'rowspan'],
      ol: ['start'],
      abbr: ['title'],
      code: ['class'],
      // Set by the transforms below only: wide code and tables scroll, so the keyboard must reach them.
      pre: ['tabindex'],
      table: ['tabindex'],
    },
    // Only code's language class: a README may not borrow the page's own classes to imitate its controls.
    allowedClasses: { code: [/^language-[A-Za-z0-9_+-]{1,40}$/] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesByTag: { img: ['http', 'https'] },
    allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    // Elements whose text must not leak into the page as text either.
    nonTextTags: [
      'script',
      'style',
      'textarea',
      'option',
      'noscript',
      'template',
      'iframe',
      'object',
      'embed',
      'svg',
      'math',
      'title',
      'xmp',
      'noembed',
      'noframes',
      'select',
    ],
    parseStyleAttributes: false,
    transformTags: {
      h1: headingTransform('h1'),
      h2: headingTransform('h2'),
      h3: headingTransform('h3'),
      h4: headingTransform('h4'),
      h5: headingTransform('h5'),
      h6: headingTransform('h6'),
      pre: () => ({ tagName: 'pre', attribs: { tabindex: '0' } }),
      table: () => ({ tagName: 'table', attribs: { tabindex: '0' } }),
      a: (_name, attribs) => {
        const raw = attribs.href ?? '';
        const out: sanitizeHtml.Attributes = {};
        if (attribs.title) out.title = attribs.title;
        if (raw.startsWith('#')) {
          const frag = slugify(decodeFragment(raw.slice(1)));
          if (frag) out.href = `#${ID_PREFIX}${frag}`;
          return { tagName: 'a', attribs: out };
        }
        const href = resolveUrl(raw, bases.link, LINK_SCHEMES);
        if (href) {
          out.href = href;
          out.rel = 'noopener nofollow ugc';
        }
        return { tagName: 'a', attribs: out };
      },
      img: (_name, attribs) => {
        const src = resolveUrl(attribs.src ?? '', bases.image, IMAGE_SCHEMES);
        const out: sanitizeHtml.Attributes = { alt: attribs.alt ?? '', loading: 'lazy', decoding: 'async', referrerpolicy: 'no-referrer' };
        if (src) out.src = src;
        if (attribs.title) out.title = attribs.title;
        if (attribs.width && NUMERIC.test(attribs.width)) out.width = attribs.width;
        if (attribs.height && NUMERIC.test(attribs.height)) out.height = attribs.height;
        return { tagName: 'img', attribs: out };
      },
    },
    // An image whose source was refused is dropped rather than left as a broken box.
    exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  };
}

function decodeFragment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Cuts the source at the last line break before `max` characters. */
function cap(source: string, max: number): { text: string; cut: boolean } {
  if (source.length <= max) return { text: source, cut: false };
  const at = source.lastIndexOf('\n', max);
  return { text: source.slice(0, at > max / 2 ? at : max), cut: true };
}

/**
 * Renders and sanitises a README: at most `maxChars` of its source, and less when the markup would
 * pass `maxHtmlChars` (a README of links and badges grows several times over when rendered), so a
 * server's page stays within its weight budget whatever the README holds.
 */
export async function renderReadme(
  source: string,
  ctx: ReadmeContext,
  maxChars: number,
  alreadyTruncated = false,
  maxHtmlChars = 64_000,
): Promise<RenderedReadme> {
  const { md, sanitize } = await loadEngines();
  const options = optionsFor(basesOf(ctx));
  let limit = maxChars;
  for (;;) {
    const { text, cut } = cap(source, limit);
    const html = sanitize(md.render(text, {}), options);
    if (html.length <= maxHtmlChars || limit <= 1000) return { html, truncated: cut || alreadyTruncated };
    limit = Math.max(1000, Math.floor((limit * maxHtmlChars * 0.9) / html.length));
  }
}
