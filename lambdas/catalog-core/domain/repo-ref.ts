/** `owner/repo` of a GitHub repository URL. */
export interface GithubRepo {
  owner: string;
  repo: string;
}

/** `owner/repo` of a GitHub URL (https, www., .git, /tree/... and git+ prefixes accepted). */
export function parseGithubRepo(url: string): GithubRepo | undefined {
  let u: URL;
  try {
    u = new URL(url.replace(/^git\+/, ''));
  } catch {
    return undefined;
  }
  const host = u.hostname.toLowerCase();
  if (host !== 'github.com' && host !== 'www.github.com') return undefined;
  const [owner, repo] = u.pathname.split('/').filter((p) => p !== '');
  if (!owner || !repo) return undefined;
  const name = repo.replace(/\.git$/i, '');
  if (!/^[A-Za-z0-9_.-]+$/.test(owner) || !/^[A-Za-z0-9_.-]+$/.test(name)) return undefined;
  return { owner, repo: name };
}
