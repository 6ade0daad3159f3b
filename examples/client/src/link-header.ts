// RFC 8288 §3: link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ),
// link-param = token BWS [ "=" BWS ( token / quoted-string ) ]. Quoted values may hold commas and
// semicolons, so the header cannot simply be split on them.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED_STRING = '"(?:[^"\\\\]|\\\\.)*"';
const PARAM_VALUE = `(?:${TOKEN}|${QUOTED_STRING})`;
const LINK_VALUE = new RegExp(`<([^>]*)>((?:\\s*;\\s*${TOKEN}\\s*(?:=\\s*${PARAM_VALUE})?)*)`, 'g');
const LINK_PARAM = new RegExp(`;\\s*(${TOKEN})\\s*(?:=\\s*(${PARAM_VALUE}))?`, 'g');

/**
 * The target (as written, possibly relative) of the first link in a `Link` header whose `rel`
 * includes `relation`; undefined when there is none.
 */
export function findLink(header: string | null, relation: string): string | undefined {
  if (header === null) return undefined;
  for (const [, target, params] of header.matchAll(LINK_VALUE)) {
    if (relationTypes(params).includes(relation.toLowerCase())) return target;
  }
  return undefined;
}

/** The relation types of a link, lower-cased; only its first `rel` counts (RFC 8288 §3.3). */
function relationTypes(params: string): string[] {
  for (const [, name, value = ''] of params.matchAll(LINK_PARAM)) {
    if (name.toLowerCase() === 'rel') return unquote(value).toLowerCase().split(/\s+/);
  }
  return [];
}

function unquote(value: string): string {
  return value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}
