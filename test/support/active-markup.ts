import { parseFragment, type DefaultTreeAdapterMap } from 'parse5';

/**
 * What would be active in a browser, read from the markup as a browser parses it (parse5 follows the
 * WHATWG parsing algorithm: entities decoded, `<img/onerror=…>` and unclosed tags read as a browser
 * reads them), never from regular expressions over the text. Each finding is one line naming the
 * element and the attribute, so a failing test says what got through.
 */
type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

const HTML_NS = 'http://www.w3.org/1999/xhtml';

/** Elements that run script, load documents or plugins, submit, restyle the page or change its base. */
const ACTIVE_ELEMENTS = new Set([
  'script',
  'style',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'portal',
  'svg',
  'math',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'isindex',
  'meta',
  'base',
  'link',
  'template',
]);

/** Attributes whose value a browser reads as a URL (`srcset` as a list of them). */
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'srcset',
  'action',
  'formaction',
  'cite',
  'poster',
  'background',
  'longdesc',
  'data',
  'codebase',
  'ping',
  'manifest',
  'icon',
  'lowsrc',
  'dynsrc',
  'usemap',
  'xlink:href',
]);

/** Attributes that act whatever their value. */
const ACTIVE_ATTRIBUTES = new Set(['style', 'srcdoc', 'formaction', 'http-equiv']);

const SCRIPT_SCHEME = /^(javascript|data|vbscript):/i;

/** The scheme a browser would see: leading and trailing C0 controls and spaces stripped, tabs and newlines removed (URL spec). */
function browserUrl(value: string): string {
  return value.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '');
}

function urlsOf(name: string, value: string): string[] {
  if (name !== 'srcset') return [value];
  return value
    .split(',')
    .map((c) => c.trim().split(/\s+/)[0] ?? '')
    .filter((u) => u !== '');
}

function* elements(node: Node): Generator<Element> {
  if ('tagName' in node) yield node;
  if ('childNodes' in node) for (const c of node.childNodes) yield* elements(c);
  if ('content' in node && node.content) yield* elements(node.content as Node);
}

function problemsIn(root: Node): string[] {
  const found: string[] = [];
  for (const el of elements(root)) {
    const tag = el.tagName.toLowerCase();
    if (ACTIVE_ELEMENTS.has(tag)) found.push(`<${tag}>`);
    else if (el.namespaceURI !== HTML_NS) found.push(`<${tag}> outside HTML`);
    for (const a of el.attrs) {
      const name = (a.prefix ? `${a.prefix}:${a.name}` : a.name).toLowerCase();
      if (name.startsWith('on')) found.push(`${tag}@${name}`);
      else if (ACTIVE_ATTRIBUTES.has(name) || name.startsWith('xlink:') || name.startsWith('xmlns')) found.push(`${tag}@${name}`);
      if (URL_ATTRIBUTES.has(name)) {
        for (const u of urlsOf(name, a.value)) if (SCRIPT_SCHEME.test(browserUrl(u))) found.push(`${tag}@${name}=${a.value.slice(0, 60)}`);
      }
    }
  }
  return found;
}

/** Active constructs in an HTML fragment (a rendered README, a card): empty when it is inert. */
export function activeMarkup(fragment: string): string[] {
  return problemsIn(parseFragment(fragment) as Node);
}

/** Every element of an HTML fragment, as a browser would build it. */
export function elementsOf(fragment: string): Element[] {
  return [...elements(parseFragment(fragment) as Node)];
}

export function attr(el: Element, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name)?.value;
}
