/**
 * The value of one sample of the exposition text whose labels include all of `labels`; undefined when there is none.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const given = new Map<string, string>();
    if (open === name.length) {
      for (const m of line.slice(open + 1, line.lastIndexOf('}')).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        given.set(m[1], m[2]);
    }
    if (Object.entries(labels).every(([k, v]) => given.get(k) === v))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}
