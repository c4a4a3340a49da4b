// postject (Node's tool for injecting a single executable application's blob) ships no types.
declare module "postject" {
    export function inject(
        filename: string,
        resourceName: string,
        resourceData: Buffer,
        options?: { sentinelFuse?: string; machoSegmentName?: string; overwrite?: boolean },
    ): Promise<void>;
}
