/**
 * The two libc calls the broker needs that Bun does not bind: prctl(PR_SET_CHILD_SUBREAPER) and
 * waitpid for orphans that were reparented to this process. Loaded once, lazily, through bun:ffi;
 * null wherever that is not possible (not Linux, no libc found, FFI refused), and callers then fall
 * back to what /proc alone can do.
 */

const prSetChildSubreaper = 36;
const prGetChildSubreaper = 37;
const waitNoHang = 1;

type Libc = {
  prctl: (option: number, argument2: bigint, argument3: bigint, argument4: bigint, argument5: bigint) => number;
  waitpid: (pid: number, status: unknown, options: number) => number;
  pointer: (view: Int32Array) => unknown;
};

/** glibc, then musl's names; the first that opens wins. */
const libraryNames = ["libc.so.6", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1", "libc.so"];

let loaded: Promise<Libc | null> | null = null;

async function open(): Promise<Libc | null> {
  if (process.platform !== "linux") return null;
  let ffi: typeof import("bun:ffi");
  try {
    ffi = await import("bun:ffi");
  } catch {
    return null;
  }
  const { FFIType } = ffi;
  for (const name of libraryNames) {
    try {
      const library = ffi.dlopen(name, {
        // prctl is variadic in the headers; on the Linux ABIs flameox targets, integer arguments of
        // a variadic call travel exactly like fixed ones, so the five-argument form is sound.
        prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
        waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
      });
      return {
        prctl: (option, a2, a3, a4, a5) => library.symbols.prctl(option, a2, a3, a4, a5) as number,
        waitpid: (pid, status, options) => library.symbols.waitpid(pid, status as never, options) as number,
        pointer: (view) => ffi.ptr(view),
      };
    } catch {
      // Try the next name.
    }
  }
  return null;
}

export function loadLibc(): Promise<Libc | null> {
  loaded ??= open();
  return loaded;
}

let subreaper: Promise<boolean> | null = null;

/**
 * Marks this process a child subreaper (Linux ≥ 3.4): a descendant whose parent exits is then
 * reparented to this process instead of init, so a double-forking daemon stays findable as our
 * child. Process-wide and permanent; returns whether it is in effect (read back, not assumed).
 */
export function becomeChildSubreaper(): Promise<boolean> {
  subreaper ??= (async () => {
    const libc = await loadLibc();
    if (libc === null) return false;
    if (libc.prctl(prSetChildSubreaper, 1n, 0n, 0n, 0n) !== 0) return false;
    const flag = new Int32Array(1);
    if (libc.prctl(prGetChildSubreaper, BigInt(libc.pointer(flag) as number), 0n, 0n, 0n) !== 0) return false;
    return flag[0] === 1;
  })().catch(() => false);
  return subreaper;
}

/**
 * Reaps one exited child without blocking. Only for orphans reparented to this process: Bun waits
 * for the processes it spawned itself, so those pids must never be passed here.
 */
export async function reapChild(pid: number): Promise<boolean> {
  const libc = await loadLibc();
  if (libc === null || !Number.isInteger(pid) || pid <= 0) return false;
  const status = new Int32Array(1);
  return libc.waitpid(pid, libc.pointer(status), waitNoHang) === pid;
}
