// Collector scripts are imported as text (`with { type: "text" }`) so `bun build --compile` embeds them.
// Shared by every adapter folder that embeds Python.
declare module "*.py" {
  const source: string;
  export default source;
}
