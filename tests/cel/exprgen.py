"""Random CEL selectors over the DRA environment, well- and ill-typed, for the parity harness and fuzz tests.

    gen = ExprGen(seed); gen.expression() -> str

Expressions mix device field access with real-looking domains, every library family with right and wrong
argument types, macros (one/two variables, bind, optMap), optionals, literals of all kinds, nesting, and
string building that inflates the cost estimate.
"""

from __future__ import annotations

import random

DOMAINS = ["gpu.example.com", "dra.example.com", "numa.k8s.io", "x"]
IDS = ["model", "memory", "numa", "uuid", "driverVersion", "ids", "index", "family"]
STRINGS = [
    '"a"',
    '"gpu"',
    "'A100'",
    '""',
    '"1.2.3"',
    '"10.0.0.0/8"',
    '"1.1.1.1"',
    '"1Gi"',
    '"^a.*$"',
    '"%d-%s"',
]


class ExprGen:
    """Generates expressions of a requested CEL type; `wrong` controls how often a type is mismatched."""

    def __init__(self, seed: int, wrong: float = 0.08) -> None:
        self.r = random.Random(seed)
        self.wrong = wrong
        self.depth = 0

    def pick(self, xs: list[str]) -> str:
        return self.r.choice(xs)

    def expression(self) -> str:
        r = self.r.random()
        if r < 0.7:
            return self.gen("bool", 0)
        if r < 0.8:
            return self.gen(self.pick(["int", "string", "list", "quantity", "any", "double"]), 0)
        if r < 0.9:
            return self.cost_bomb()
        return (
            self.gen("bool", 0)
            + self.pick([" &&", " ||", ")", "(", " ?", ".", " +", "]", ""])
            + self.pick(["", " 1", " x"])
        )

    def attr(self) -> str:
        d = self.pick(DOMAINS)
        i = self.pick(IDS)
        form = self.r.randrange(5)
        if form == 0:
            return f'device.attributes["{d}"].{i}'
        if form == 1:
            return f'device.attributes["{d}"]["{i}"]'
        if form == 2:
            return f'device.attributes["{d}"].?{i}.orValue({self.lit()})'
        if form == 3:
            return f'cel.bind(a, device.attributes["{d}"], a.{i})'
        return f'device.attributes["{d}"][?"{i}"].orValue({self.lit()})'

    def cap(self) -> str:
        d = self.pick(DOMAINS)
        i = self.pick(IDS)
        return self.pick([f'device.capacity["{d}"].{i}', f'device.capacity["{d}"]["{i}"]'])

    def lit(self) -> str:
        return self.pick(["1", "0", "-3", "2u", "1.5", "true", "null", "b'x'", "[]", "{}", "[1]", *STRINGS])

    def gen(self, ty: str, depth: int) -> str:
        if self.r.random() < self.wrong:
            ty = self.pick(
                ["bool", "int", "string", "list", "map", "quantity", "double", "uint", "any", "opt", "ip"]
            )
        leaf = depth > 3 or self.r.random() < 0.25
        g = getattr(self, "g_" + ty, None)
        if g is None:
            return self.lit()
        return str(g(depth + 1, leaf))

    # per-type generators
    def g_bool(self, d: int, leaf: bool) -> str:
        if leaf:
            return self.pick(
                [
                    "true",
                    "false",
                    "has(device.driver)",
                    f'"{self.pick(DOMAINS)}" in device.attributes',
                    "device.allowMultipleAllocations",
                ]
            )
        k = self.r.randrange(16)
        g = self.gen
        if k == 0:
            return f"{g('bool', d)} && {g('bool', d)}"
        if k == 1:
            return f"{g('bool', d)} || !{g('bool', d)}"
        if k == 2:
            op = self.pick(["==", "!=", "<", "<=", ">", ">="])
            a = self.pick(["int", "double", "uint", "string"])
            b = a if self.r.random() < 0.7 else self.pick(["int", "double", "uint", "string"])
            return f"{g(a, d)} {op} {g(b, d)}"
        if k == 3:
            return f"device.driver == {g('string', d)}"
        if k == 4:
            return f"{self.attr()} == {self.lit()}"
        if k == 5:
            v = self.pick(["x", "k", "device"])
            mac = self.pick(["all", "exists", "exists_one", "existsOne"])
            return f"{g('list', d)}.{mac}({v}, {g('bool', d)})"
        if k == 6:
            return f'device.attributes["{self.pick(DOMAINS)}"].exists(k, v, {g("bool", d)})'
        if k == 7:
            return f"{self.cap()}.{self.pick(['isGreaterThan', 'isLessThan'])}({g('quantity', d)})"
        if k == 8:
            return f"{g('string', d)}.{self.pick(['startsWith', 'endsWith', 'contains', 'matches'])}({g('string', d)})"
        if k == 9:
            return f"has({self.pick(['device.attributes', 'device.capacity'])}.{self.pick(['x', 'y'])})"
        if k == 10:
            return f"semver({self.pick(STRINGS)}).isGreaterThan(semver({self.pick(STRINGS)}))"
        if k == 11:
            return f"{g('list', d)}.{self.pick(['isSorted', 'sum', 'min', 'max'])}() {self.pick(['==', '>'])} {self.lit()}"
        if k == 12:
            return f"cidr({self.pick(STRINGS)}).containsIP({self.pick([g('string', d), 'ip(' + self.pick(STRINGS) + ')'])})"
        if k == 13:
            return (
                f"sets.{self.pick(['contains', 'intersects', 'equivalent'])}({g('list', d)}, {g('list', d)})"
            )
        if k == 14:
            return f"{self.attr()}.includes({self.lit()})"
        return f"({g('bool', d)} ? {g('bool', d)} : {g('bool', d)})"

    def g_int(self, d: int, leaf: bool) -> str:
        if leaf:
            return self.pick(["1", "42", "-7", "0x1F", "9223372036854775807", "size(device.attributes)"])
        k = self.r.randrange(8)
        g = self.gen
        if k == 0:
            return f"{g('int', d)} {self.pick(['+', '-', '*', '/', '%'])} {g('int', d)}"
        if k == 1:
            return f"size({g(self.pick(['string', 'list', 'map']), d)})"
        if k == 2:
            return f"{g('string', d)}.{self.pick(['indexOf', 'lastIndexOf'])}({g('string', d)})"
        if k == 3:
            return f"{self.cap()}.compareTo({g('quantity', d)})"
        if k == 4:
            return f"int({g(self.pick(['double', 'string', 'uint']), d)})"
        if k == 5:
            return f"semver({self.pick(STRINGS)}).{self.pick(['major', 'minor', 'patch'])}()"
        if k == 6:
            return f"{self.attr()}"
        return f"{g('list', d)}[{g('int', d)}]"

    def g_uint(self, d: int, leaf: bool) -> str:
        return self.pick(["1u", "0u", "uint(3)", f"uint({self.gen('int', d)})"])

    def g_double(self, d: int, leaf: bool) -> str:
        if leaf:
            return self.pick(["1.5", "-0.0", "2e3", f"{self.cap()}.asApproximateFloat()"])
        return f"{self.gen('double', d)} {self.pick(['+', '*', '/'])} {self.gen('double', d)}"

    def g_string(self, d: int, leaf: bool) -> str:
        if leaf:
            return self.pick([*STRINGS, "device.driver", "r'raw\\n'", '"""tri"""', "'\\x41\\u00e9'"])
        k = self.r.randrange(9)
        g = self.gen
        if k == 0:
            return f"{g('string', d)} + {g('string', d)}"
        if k == 1:
            return f"{g('string', d)}.{self.pick(['lowerAscii', 'upperAscii', 'trim', 'reverse'])}()"
        if k == 2:
            return f"{g('string', d)}.replace({g('string', d)}, {g('string', d)})"
        if k == 3:
            return f"{g('list', d)}.join({self.pick(STRINGS)})"
        if k == 4:
            return f"string({g(self.pick(['int', 'double', 'bool', 'quantity', 'ip']), d)})"
        if k == 5:
            return f"{g('string', d)}.substring({g('int', d)})"
        if k == 6:
            return f"{self.pick(STRINGS)}.format([{g('int', d)}, {g('string', d)}])"
        if k == 7:
            pattern = self.pick([*STRINGS, '"("', '"a\\\\1"', '"(?=a)"'])
            return f"{g('string', d)}.{self.pick(['find', 'findAll', 'matches'])}({pattern})"
        return f"{self.attr()}"

    def g_list(self, d: int, leaf: bool) -> str:
        if leaf:
            return self.pick(["[1, 2, 3]", "['a', 'b']", "[]", "[1, 'a']", "[[1], [2]]", "[1.0, 2]"])
        k = self.r.randrange(7)
        g = self.gen
        if k == 0:
            return f"{g('list', d)}.map(x, {g('int', d)})"
        if k == 1:
            return f"{g('list', d)}.filter(x, {g('bool', d)})"
        if k == 2:
            return f"{g('string', d)}.split({self.pick(STRINGS)})"
        if k == 3:
            return f"{g('list', d)} + {g('list', d)}"
        if k == 4:
            return f'device.attributes["{self.pick(DOMAINS)}"].{self.pick(IDS)}'
        if k == 5:
            return f"[{g('int', d)}, {g('int', d)}, ?optional.of({g('int', d)})]"
        return f"lists.range({self.pick(['3', '10', '-1'])})"

    def g_map(self, d: int, leaf: bool) -> str:
        return self.pick(
            [
                "{}",
                "{'a': 1}",
                "{1: 'a', 2: 'b'}",
                "device.attributes",
                f'device.capacity["{self.pick(DOMAINS)}"]',
                "{'a': 1, 'b': 'x'}",
            ]
        )

    def g_quantity(self, d: int, leaf: bool) -> str:
        return self.pick(
            [
                f"quantity({self.pick(STRINGS)})",
                self.cap(),
                f"{self.cap()}.add({self.gen('int', d)})",
                "quantity('1e3')",
            ]
        )

    def g_any(self, d: int, leaf: bool) -> str:
        return self.attr()

    def g_opt(self, d: int, leaf: bool) -> str:
        return self.pick(
            [
                "optional.none()",
                f"optional.of({self.lit()})",
                f'device.attributes["{self.pick(DOMAINS)}"].?x',
                "optional.of(1).optMap(v, v + 1)",
            ]
        )

    def g_ip(self, d: int, leaf: bool) -> str:
        return self.pick(
            [f"ip({self.pick(STRINGS)})", f"cidr({self.pick(STRINGS)}).ip()", "cidr('10.0.0.0/8').masked()"]
        )

    def cost_bomb(self) -> str:
        """String building and nested iteration near the cost limit."""
        k = self.r.randrange(5)
        n = self.r.randrange(1, 12)
        if k == 0:
            inner = "device.driver"
            for i in range(n):
                inner = f"cel.bind(s{i}, {inner} + {inner}, s{i})"
            return f"{inner}.size() > 0"
        if k == 1:
            return (
                f'device.attributes["{self.pick(DOMAINS)}"].{self.pick(IDS)}.map(x, ' * n
                + "1"
                + ")" * n
                + " == []"
            )
        if k == 2:
            return " + ".join(["device.driver"] * (n * 10)) + ' == "a"'
        if k == 3:
            return "device.attributes.exists(d, " * min(n, 4) + "true" + ")" * min(n, 4)
        return f'{self.pick(STRINGS)}.replace("a", {" + ".join(["device.driver"] * n)}).size() > {n}'
