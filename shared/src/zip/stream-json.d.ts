// The part of stream-json (no bundled types) that the log reader uses: its token parser.
declare module 'stream-json/Parser' {
  import type { Transform, TransformOptions } from 'node:stream';
  export interface Token {
    name: string;
    value?: string | number | boolean | null;
  }
  export interface ParserOptions extends TransformOptions {
    packValues?: boolean;
    streamValues?: boolean;
    jsonStreaming?: boolean;
  }
  export function parser(options?: ParserOptions): Transform;
}
