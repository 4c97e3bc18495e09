import { StringDecoder } from 'node:string_decoder';

/**
 * The rows of a classroom envelope `{"error": false, "data": [row, row, ...]}` read from its stream as
 * they arrive: each element of the top-level `data` array is parsed on its own and yielded, so a report
 * of every learner of a school passes through central without being held whole. Only one row's text is
 * ever kept (at most `maxRowChars`). The envelope must say `"error": false` and carry the array;
 * otherwise, at the end, the answer is refused (EnvelopeError).
 */
export class EnvelopeError extends Error {}

export async function* envelopeRows(
  source: AsyncIterable<Buffer | string>,
  maxRowChars = 4 * 1024 * 1024,
): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  let depth = 0;
  let inString = false;
  let escaped = false;
  // The top-level object: the key being read or last read, and whether a key (not a value) comes next.
  let expectKey = false;
  let readingKey = false;
  let key = '';
  let lastKey = '';
  let errorValue = '';
  let sawData = false;
  // Inside the `data` array: the current element's text (carried across chunks) and where it began.
  let inData = false;
  let item = '';
  let itemStart = -1;

  const pending: unknown[] = [];
  const emit = (text: string) => {
    const t = text.trim();
    if (!t) return;
    if (t.length > maxRowChars) throw new EnvelopeError('classroom row too large');
    pending.push(JSON.parse(t));
  };

  const scan = (s: string) => {
    for (let i = 0; i < s.length; i += 1) {
      const ch = s[i];
      if (inString) {
        if (readingKey && !escaped && ch !== '"') key += ch;
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') {
          inString = false;
          if (readingKey) {
            readingKey = false;
            lastKey = key;
          }
        }
        continue;
      }
      if (ch === '"') {
        inString = true;
        if (depth === 1 && expectKey) {
          readingKey = true;
          key = '';
        } else if (inData && depth === 2 && itemStart < 0 && item === '') itemStart = i;
        continue;
      }
      if (inData) {
        if (depth === 2 && (ch === ',' || ch === ']')) {
          const text = item + (itemStart >= 0 ? s.slice(itemStart, i) : '');
          item = '';
          itemStart = -1;
          emit(text);
          if (ch === ']') {
            inData = false;
            depth = 1;
          }
          continue;
        }
        if (depth === 2 && itemStart < 0 && item === '' && !/\s/.test(ch)) itemStart = i;
        if (ch === '{' || ch === '[') depth += 1;
        else if (ch === '}' || ch === ']') depth -= 1;
        continue;
      }
      if (ch === '{' || ch === '[') {
        depth += 1;
        if (depth === 1) expectKey = ch === '{';
        if (depth === 2 && ch === '[' && lastKey === 'data') {
          inData = true;
          sawData = true;
          item = '';
          itemStart = -1;
        }
      } else if (ch === '}' || ch === ']') {
        depth -= 1;
      } else if (depth === 1) {
        if (ch === ':') expectKey = false;
        else if (ch === ',') expectKey = true;
        else if (lastKey === 'error' && !/\s/.test(ch)) errorValue += ch;
      }
    }
    if (inData && itemStart >= 0) {
      item += s.slice(itemStart);
      itemStart = 0;
      if (item.length > maxRowChars) throw new EnvelopeError('classroom row too large');
    }
  };

  for await (const chunk of source) {
    const s = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    // A chunk's unfinished element continues at the start of the next.
    if (inData && itemStart >= 0) itemStart = 0;
    scan(s);
    while (pending.length) yield pending.shift();
  }
  scan(decoder.end());
  while (pending.length) yield pending.shift();
  if (!sawData || inData || depth !== 0 || errorValue !== 'false')
    throw new EnvelopeError('classroom answer is not a success envelope with rows');
}
