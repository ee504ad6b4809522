import { homedir, tmpdir } from "node:os";
import { userCacheFolderOn } from "../domain/user-cache.ts";

/** A folder of flameox's in this user's cache (never the workspace); see userCacheFolderOn. */
export function userCacheFolder(name: string): string {
  return userCacheFolderOn(
    { platform: process.platform, environment: process.env, homeDirectory: homedir(), temporaryDirectory: tmpdir() },
    name,
  );
}
