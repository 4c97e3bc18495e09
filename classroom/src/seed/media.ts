import fs from 'node:fs';
import path from 'node:path';

/** The demo's media files (three short videos, the option pictures, the lesson plan), shipped with the code. */
export const DEMO_MEDIA_DIR = path.resolve(__dirname, '..', '..', 'demo-media');

/**
 * Copies the demo media into the media folder, keeping their sub-folders; a file already there with the
 * same size is left alone. Answers the line to print.
 */
export function copyDemoMedia(mediaDir: string, from = DEMO_MEDIA_DIR): string {
  let copied = 0;
  let kept = 0;
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        walk(name);
        continue;
      }
      const source = path.join(from, name);
      const target = path.join(mediaDir, name);
      const had = fs.statSync(target, { throwIfNoEntry: false });
      if (had?.isFile() && had.size === fs.statSync(source).size) {
        kept += 1;
        continue;
      }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(source, target);
      copied += 1;
    }
  };
  walk('');
  return `classroom: demo media in ${mediaDir}: ${copied} copied, ${kept} already there (served at /media/<name>, ` +
    `e.g. /media/demo/counting-to-ten.mp4)`;
}
