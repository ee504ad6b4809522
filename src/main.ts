const { duckdbVersion } = await import("./store/duckdb.ts");
console.log(await duckdbVersion());
