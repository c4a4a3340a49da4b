// Condition expressions as IAM judges them: they must parse as CEL ("Overview of IAM Conditions": "a subset of
// the Common Expression Language"), and hold at most LIMITS.logicalOperators logical operators. Parsing is
// @bufbuild/cel's: Buf's CEL implementation, maintained with the protobuf-es stack and run against the CEL
// specification's conformance tests, with a parser that reports the position of a syntax error.

import { parse } from "@bufbuild/cel";
import { LIMITS } from "./rules";

/** Why IAM refuses a condition expression, or undefined. */
export function expressionProblem(expression: string): string | undefined {
    try {
        parse(expression);
    } catch (e) {
        const detail = e instanceof Error ? e.message.split("\n")[0] : String(e);
        return `Condition expression is not valid CEL: ${detail}`;
    }
    const operators = countLogicalOperators(expression);
    if (operators > LIMITS.logicalOperators) {
        return `Condition expression has ${operators} logical operators; at most ${LIMITS.logicalOperators} are allowed.`;
    }
    return undefined;
}

/**
 * `&&`, `||` and `!` (not `!=`) as written, outside string literals. Counted in the source rather than the AST
 * because CEL's parser expands macros (`exists`, `all`) into comprehensions whose hidden `&&`/`||` the author
 * never wrote.
 */
export function countLogicalOperators(expression: string): number {
    let count = 0;
    for (let i = 0; i < expression.length; i++) {
        const c = expression[i];
        if (c === '"' || c === "'") {
            const triple = expression.startsWith(c.repeat(3), i);
            const close = triple ? c.repeat(3) : c;
            i += close.length;
            while (i < expression.length && !expression.startsWith(close, i)) i += expression[i] === "\\" ? 2 : 1;
            i += close.length - 1;
        } else if ((c === "&" || c === "|") && expression[i + 1] === c) {
            count++;
            i++;
        } else if (c === "!" && expression[i + 1] !== "=") {
            count++;
        }
    }
    return count;
}
