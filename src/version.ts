declare const FLAMEOX_VERSION: string | undefined;

/** Injected by scripts/build.ts; source runs read package.json's version through the same name. */
export const flameoxVersion: string = typeof FLAMEOX_VERSION === "string" ? FLAMEOX_VERSION : "0.1.0-dev";
