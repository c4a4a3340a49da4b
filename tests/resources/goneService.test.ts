// A service deleted behind the stack's back: Service Management answers 403 for it (as for a denial), so every
// refresh and destroy fails on its resources. The error says how to get the resource out of the stack.

import { expect } from "chai";
import { PropertyMap } from "../../provider/declare/properties";
import { BINDING, MEMBER, POLICY, rpcError, useStack } from "../support/plugin";

const SERVICE = "kept.endpoints.my-project.cloud.goog";
const GONE = "gone.endpoints.my-project.cloud.goog";
const ROLE = "roles/servicemanagement.serviceConsumer";

describe("a deleted service (403): refresh and destroy name `pulumi state delete`", function () {
    this.timeout(60_000);
    const stack = useStack("ya29.gone-service-token", [SERVICE]);
    const states: [string, PropertyMap][] = [
        [MEMBER, { serviceName: GONE, role: ROLE, member: "user:a@example.com", etag: "BwX" }],
        [BINDING, { serviceName: GONE, role: ROLE, members: ["user:a@example.com"], etag: "BwX" }],
        [POLICY, { serviceName: GONE, policyData: "{}", etag: "BwX" }],
    ];

    for (const [type, state] of states) {
        it(`${type}: refresh and delete fail with the 403's message and what removes the resource from the stack`, async () => {
            const id = `services/${GONE}`;
            for (const call of [stack.plugin.read(type, id, state, state), stack.plugin.delete(type, id, state)]) {
                const e = await rpcError(call);
                expect(e.details).to.contain("was not found, or").and.contain("403").and.contain("pulumi state delete <urn>")
                    .and.contain("pulumi stack --show-urns");
            }
        });
    }
});
