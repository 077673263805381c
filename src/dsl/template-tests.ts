import { compare, contains, equal, numeric, RenderFault, type RenderBudget } from './template-values.ts';
import { isPlainObject } from '../objects.ts';

// Jinja's `is` tests (`x is defined`, `n is divisibleby(3)`), by name. A Map, so no name reaches
// an inherited property; the names are checked when a template is parsed.

type Test = (value: unknown, args: readonly unknown[], budget: RenderBudget) => boolean;

const arg = (args: readonly unknown[], name: string): unknown => {
  if (args.length !== 1) throw new RenderFault(`test '${name}' takes one argument`);
  return args[0];
};

const integer = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

const eq: Test = (value, args, budget) => equal(value, arg(args, 'eq'), budget);
const ne: Test = (value, args, budget) => !equal(value, arg(args, 'ne'), budget);
const lt: Test = (value, args) => compare(value, arg(args, 'lt')) < 0;
const le: Test = (value, args) => compare(value, arg(args, 'le')) <= 0;
const gt: Test = (value, args) => compare(value, arg(args, 'gt')) > 0;
const ge: Test = (value, args) => compare(value, arg(args, 'ge')) >= 0;

export const templateTests: ReadonlyMap<string, Test> = new Map<string, Test>([
  ['defined', (value) => value !== undefined],
  ['undefined', (value) => value === undefined],
  ['none', (value) => value === null],
  ['boolean', (value) => typeof value === 'boolean'],
  ['true', (value) => value === true],
  ['false', (value) => value === false],
  ['number', (value) => typeof value === 'number'],
  ['integer', integer],
  ['float', (value) => typeof value === 'number' && !Number.isInteger(value)],
  ['string', (value) => typeof value === 'string'],
  ['mapping', (value) => isPlainObject(value)],
  ['iterable', (value) => typeof value === 'string' || Array.isArray(value) || isPlainObject(value)],
  ['sequence', (value) => typeof value === 'string' || Array.isArray(value) || isPlainObject(value)],
  // Nothing a template holds can be called: functions and macros are not values.
  ['callable', () => false],
  ['even', (value) => integer(value) && value % 2 === 0],
  ['odd', (value) => integer(value) && Math.abs(value % 2) === 1],
  [
    'divisibleby',
    (value, args) => {
      const n = numeric(arg(args, 'divisibleby'));
      const v = numeric(value);
      if (n === undefined || v === undefined) throw new RenderFault('divisibleby needs numbers');
      return n !== 0 && v % n === 0;
    },
  ],
  ['eq', eq],
  ['equalto', eq],
  ['==', eq],
  ['ne', ne],
  ['!=', ne],
  ['lt', lt],
  ['lessthan', lt],
  ['<', lt],
  ['le', le],
  ['<=', le],
  ['gt', gt],
  ['greaterthan', gt],
  ['>', gt],
  ['ge', ge],
  ['>=', ge],
  ['in', (value, args, budget) => contains(arg(args, 'in'), value, budget)],
  ['sameas', (value, args) => value === arg(args, 'sameas')],
  ['lower', (value) => typeof value === 'string' && value === value.toLowerCase()],
  ['upper', (value) => typeof value === 'string' && value === value.toUpperCase()],
  ['escaped', () => false],
]);

/** Applies the test `name`; throws RenderFault for an unknown one. */
export function applyTest(name: string, value: unknown, args: readonly unknown[], budget: RenderBudget): boolean {
  const test = templateTests.get(name);
  if (!test) throw new RenderFault(`unknown test '${name}'`);
  return test(value, args, budget);
}
