// The typed values a declaration describes: what handlers are given is derived from the declared properties.

import { expect } from "chai";
import { property, types, Values } from "../../provider/define";
import { resources } from "../../provider/resources";

type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe("declared values", () => {
    it("types a property declared for one kind of parent only as optional, the others as declared", () => {
        const declare = (kind: "service" | "consumer") => {
            const name = property(types.string, "x", { required: true });
            return { ...(kind === "consumer" ? { consumerProject: name } : {}), note: property(types.string, "y"), serviceName: name };
        };
        type V = Values<ReturnType<typeof declare>>;
        const exact: Exact<{ [K in keyof V]: V[K] }, { consumerProject?: string; note?: string; serviceName: string }> = true;
        expect(exact).to.equal(true);
        expect(Object.keys(declare("service"))).to.deep.equal(["note", "serviceName"]);
        expect(declare("consumer").consumerProject?.required).to.equal(true);
    });

    it("declares consumerProject, required, on exactly the consumer resources", () => {
        for (const r of resources) {
            const consumer = r.token.includes("/consumersIam");
            expect(r.inputs.consumerProject?.required, r.token).to.equal(consumer ? true : undefined);
        }
    });
});
