// The QR encoder the fleet page is served with (uqr's ES module, as `qr.js` beside the page's scripts).
export interface QrCode {
  size: number;
  /** Rows of modules, `true` for dark, the quiet border included. */
  data: boolean[][];
}
export function encode(text: string, o?: { ecc?: 'L' | 'M' | 'Q' | 'H'; border?: number }): QrCode;
