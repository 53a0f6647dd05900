// A few strict validators for API responses. Objects reject keys they do not
// declare, at every depth: the contract promises exact output shapes, and a
// client that tolerates drift hides server bugs.

export class ShapeError extends Error {
  override name = "ShapeError";
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path === "" ? "(root)" : path}: ${problem}`);
  }
}

export type Validator<T> = (value: unknown, path: string) => T;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? `the string ${JSON.stringify(value).slice(0, 60)}` : `a ${typeof value}`;
}

export const string: Validator<string> = (value, path) => {
  if (typeof value !== "string") throw new ShapeError(path, `expected a string, got ${describe(value)}`);
  return value;
};

export const nonEmptyString: Validator<string> = (value, path) => {
  const s = string(value, path);
  if (s.length === 0) throw new ShapeError(path, "expected a non-empty string");
  return s;
};

export const boolean: Validator<boolean> = (value, path) => {
  if (typeof value !== "boolean") throw new ShapeError(path, `expected a boolean, got ${describe(value)}`);
  return value;
};

export const integer: Validator<number> = (value, path) => {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw new ShapeError(path, `expected an integer, got ${describe(value)}`);
  }
  return value;
};

export const nonNegativeInteger: Validator<number> = (value, path) => {
  const n = integer(value, path);
  if (n < 0) throw new ShapeError(path, "expected a non-negative integer");
  return n;
};

/** An integer in [min, max]. */
export function integerIn(min: number, max: number): Validator<number> {
  return (value, path) => {
    const n = integer(value, path);
    if (n < min || n > max) throw new ShapeError(path, `expected an integer in ${min}..${max}, got ${n}`);
    return n;
  };
}

/** A finite number in [min, max]. */
export function numberIn(min: number, max: number): Validator<number> {
  return (value, path) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new ShapeError(path, `expected a number, got ${describe(value)}`);
    }
    if (value < min || value > max) throw new ShapeError(path, `expected a number in ${min}..${max}, got ${value}`);
    return value;
  };
}

export function matching(pattern: RegExp, what: string): Validator<string> {
  return (value, path) => {
    const s = string(value, path);
    if (!pattern.test(s)) throw new ShapeError(path, `expected ${what}`);
    return s;
  };
}

export const absoluteHttpUrl: Validator<string> = (value, path) => {
  const s = nonEmptyString(value, path);
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new ShapeError(path, "expected an absolute http(s) URL");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.host === "") {
    throw new ShapeError(path, "expected an absolute http(s) URL");
  }
  return s;
};

export function literal<const T extends readonly (string | number | boolean)[]>(...values: T): Validator<T[number]> {
  return (value, path) => {
    if (!values.includes(value as T[number])) {
      throw new ShapeError(path, `expected one of ${values.map((v) => JSON.stringify(v)).join(", ")}, got ${describe(value)}`);
    }
    return value as T[number];
  };
}

export function nullable<T>(inner: Validator<T>): Validator<T | null> {
  return (value, path) => (value === null ? null : inner(value, path));
}

export function array<T>(item: Validator<T>, options: { min?: number; max?: number } = {}): Validator<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) throw new ShapeError(path, `expected an array, got ${describe(value)}`);
    if (options.min !== undefined && value.length < options.min) {
      throw new ShapeError(path, `expected at least ${options.min} item(s)`);
    }
    if (options.max !== undefined && value.length > options.max) {
      throw new ShapeError(path, `expected at most ${options.max} item(s)`);
    }
    return value.map((v, i) => item(v, `${path}[${i}]`));
  };
}

type Shape = Record<string, Validator<unknown>>;
type Out<S extends Shape> = { [K in keyof S]: S[K] extends Validator<infer T> ? T : never };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An object with exactly the required keys and any of the optional ones.
 * Optional keys must be absent rather than null or undefined ("optional
 * fields are omitted, never sent as null").
 */
export function object<R extends Shape, O extends Shape = Record<never, never>>(
  required: R,
  optional?: O,
): Validator<Out<R> & Partial<Out<O>>> {
  return (value, path) => {
    if (!isPlainObject(value)) throw new ShapeError(path, `expected an object, got ${describe(value)}`);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      if (!(key in required) && !(optional !== undefined && key in optional)) {
        throw new ShapeError(path, `unexpected key ${JSON.stringify(key)}`);
      }
    }
    for (const [key, validator] of Object.entries(required)) {
      if (!(key in value)) throw new ShapeError(path, `missing key ${JSON.stringify(key)}`);
      out[key] = validator(value[key], path === "" ? key : `${path}.${key}`);
    }
    for (const [key, validator] of Object.entries(optional ?? {})) {
      if (key in value) out[key] = validator(value[key], path === "" ? key : `${path}.${key}`);
    }
    return out as Out<R> & Partial<Out<O>>;
  };
}

/** A union told apart by one string key; each variant validates the whole object. */
export function variants<T>(key: string, cases: Record<string, Validator<T>>): Validator<T> {
  return (value, path) => {
    if (!isPlainObject(value)) throw new ShapeError(path, `expected an object, got ${describe(value)}`);
    const tag = value[key];
    const validator = typeof tag === "string" ? cases[tag] : undefined;
    if (validator === undefined) {
      throw new ShapeError(
        path === "" ? key : `${path}.${key}`,
        `expected one of ${Object.keys(cases).join(", ")}, got ${describe(tag)}`,
      );
    }
    return validator(value, path);
  };
}
