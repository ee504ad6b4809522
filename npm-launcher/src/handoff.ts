import { spawn } from "node:child_process";

/** Runs `<binary> args…`, forwarding signals; a signal death is re-raised, never turned into exit 0. */
export function handOff(binary: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { stdio: "inherit", env: { ...env, FLAMEOX_NPM_BOOTSTRAP: "1" } });
    const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
    const forward = (signal: NodeJS.Signals) => {
      try {
        child.kill(signal);
      } catch {
        // The child is already gone.
      }
    };
    for (const signal of signals) process.on(signal, forward);
    child.on("error", (error) => {
      process.stderr.write(`Could not start flameox setup: ${error.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      for (const name of signals) process.off(name, forward);
      if (signal) {
        process.kill(process.pid, signal);
        // If the signal is ignored here, still report failure.
        setTimeout(() => resolve(1), 1000);
        return;
      }
      resolve(code ?? 1);
    });
  });
}
