// What the packaged plugin's entry (process/boot.ts) and its build (scripts/dist.ts) agree on.

/** The assets inside a self-contained executable. */
export const ASSETS = {
    /** The provider, bundled (provider/process/main.ts). */
    main: "main.js",
    /** V8's code cache for main.js, made by the executable itself up to its port line. */
    cache: "main.js.cache",
    /** google-auth-library and its dependencies, bundled apart: loaded on the first credentialed request. */
    auth: "google-auth-library.js",
    /** The package schema the provider serves. */
    schema: "schema.json",
} as const;

/** Build-time switch: write the code cache to the file it names, and exit once the port is printed. */
export const WRITE_CODE_CACHE_ENV = "PULUMI_CLOUD_WRITE_CODE_CACHE";

/** The Node releases the folder packaging runs on (package.json's `engines.node`; a test keeps them equal). */
export const NODE_ENGINES = ">=20.19 <21 || >=22";

/** Whether Node `version` (e.g. "20.19.1") is one NODE_ENGINES allows. */
export function nodeSupported(version: string): boolean {
    const [major, minor] = version.split(".").map(Number);
    return (major === 20 && minor >= 19) || major >= 22;
}
