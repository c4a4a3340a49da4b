// The API's answer is taken as Google wrote it, but it must be a policy: the plugin checks it against the same
// declaration that types it (provider/iam/model.ts), shape only, and keeps fields it does not know.

import { expect } from "chai";
import * as http from "http";
import { AddressInfo } from "net";
import { Plugin, rpcError, SERVICE_FN } from "../support/plugin";

const SERVICE = "answers.endpoints.my-project.cloud.goog";

describe("the API's answers", function () {
    this.timeout(20_000);
    let server: http.Server;
    let body = "";
    let plugin: Plugin;

    before(async () => {
        server = http.createServer((req, res) => {
            req.resume();
            req.on("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(body));
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        plugin = await Plugin.start();
        await plugin.configure(undefined, {
            "cloud:config:serviceManagementCustomEndpoint": `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`,
            "cloud:config:accessToken": "ya29.answers-test-token",
        });
    });
    after(async () => {
        await plugin.stop();
        server.close();
    });

    it("an answer that is not a policy is an error saying what is wrong with it", async () => {
        body = JSON.stringify({ bindings: "all of them" });
        const err = await rpcError(plugin.invoke(SERVICE_FN, { serviceName: SERVICE }));
        expect(err.details).to.contain("returned a body that is not a policy").and.contain("`bindings` must be a list");
        body = JSON.stringify({ bindings: [{ role: "roles/viewer" }] });
        const missing = await rpcError(plugin.invoke(SERVICE_FN, { serviceName: SERVICE }));
        expect(missing.details).to.contain("`bindings[0].members` is required");
    });

    it("fields this package does not know, and values no input rule would take, are taken as Google wrote them", async () => {
        body = JSON.stringify({
            etag: "BwX", version: 3, futureField: { a: 1 },
            bindings: [{ role: "roles/viewer", members: ["deleted:user:gone@example.com?uid=1"],
                condition: { title: "t", expression: "true", location: { line: 1 } } }],
        });
        const res = await plugin.invoke(SERVICE_FN, { serviceName: SERVICE });
        expect(res.failures).to.deep.equal([]);
        expect(res.return!.etag).to.equal("BwX");
    });
});
