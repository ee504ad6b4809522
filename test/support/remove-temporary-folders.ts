/** Preloaded by bunfig.toml: the suite's scratch folders go after its last test (see temporary-folders.ts). */
import { afterAll } from "bun:test";
import { removeTemporaryFolders } from "./temporary-folders.ts";

afterAll(removeTemporaryFolders);
