/** The building blocks flameox.toml's schemas share: names, scalars, uniqueness. */
import * as v from "valibot";

export const configurationNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const environmentNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const parameterNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const ConfigurationNameSchema = v.pipe(
  v.string(),
  v.minLength(1, "names must not be empty"),
  v.maxLength(100, "names must be at most 100 characters"),
  v.regex(configurationNamePattern, "names must match ^[A-Za-z0-9][A-Za-z0-9._-]*$"),
);

export const noNul = v.check((text: string) => !text.includes("\0"), "must not contain NUL");

export const ScalarSchema = v.union(
  [v.pipe(v.string(), v.maxLength(4096), noNul), v.pipe(v.number(), v.finite()), v.boolean()],
  "must be a string, number or boolean",
);

export const ParameterNameSchema = v.pipe(
  v.string(),
  v.maxLength(100, "parameter names must be at most 100 characters"),
  v.regex(parameterNamePattern, "parameter names must be plain identifiers ([A-Za-z_][A-Za-z0-9_]*)"),
);

export function uniqueBy<T>(key: (item: T) => string, message: string) {
  return v.check<T[], string>((items) => new Set(items.map(key)).size === items.length, message);
}

export type ScalarValue = string | number | boolean;

export const scalarKey = (value: unknown) => `${typeof value}:${String(value)}`;
