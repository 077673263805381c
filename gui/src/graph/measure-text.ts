import type { Measure } from './layout.ts';

// The fonts styles.css gives a step box's lines (`svg.graph .node-name`, `.node-sub`), in the
// page's own family: a box is sized to what the browser will draw, not to a guess per character.
const FONTS = { name: '600 13px', sub: '11px' } as const;

let context: CanvasRenderingContext2D | null | undefined;

/** Widths as the browser draws the graph's text; undefined without a canvas (layoutGraph then estimates). */
export function browserMeasure(): Measure | undefined {
  if (typeof document === 'undefined') return undefined;
  context ??= document.createElement('canvas').getContext('2d');
  const ctx = context;
  if (!ctx) return undefined;
  const family = getComputedStyle(document.body).fontFamily || 'sans-serif';
  return (text, kind) => {
    ctx.font = `${FONTS[kind]} ${family}`;
    return ctx.measureText(text).width;
  };
}
