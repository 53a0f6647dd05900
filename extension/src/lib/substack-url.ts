// Substack post URLs: /p/{slug} on {publication}.substack.com or on a
// publisher's own domain.

const POST_PATH = /^\/p\/([^/?#]+)\/?$/;

/** The post slug of a /p/{slug} path, on any host; null for other paths. */
export function substackSlugOf(raw: string): string | null {
  try {
    const url = new URL(raw);
    const slug = POST_PATH.exec(url.pathname)?.[1];
    return slug === undefined ? null : decodeURIComponent(slug);
  } catch {
    return null;
  }
}

export function isSubstackPostPath(pathname: string): boolean {
  return POST_PATH.test(pathname);
}
