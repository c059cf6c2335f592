"""OpenSim's expression language (Lepton) parsed into CasADi expressions, never evaluated with Python's eval.

Grammar (Lepton's ``Parser``): numbers (``1``, ``2.5``, ``1e-3``), variables (names), ``+ - * / ^``, unary
minus, parentheses and function calls. Precedence from low to high: ``+ -``, ``* /``, unary minus, ``^``;
``^`` groups to the right (``2^3^2`` is 2^9) and binds tighter than unary minus (``-x^2`` is −(x²)).
Functions: sqrt exp log sin cos sec csc tan cot asin acos atan atan2 sinh cosh tanh erf erfc step delta square
cube recip min max abs floor ceil select, with Lepton's definitions (``step(x)`` = 1 for x ≥ 0 else 0,
``delta(x)`` = 1 for x = 0, ``select(x, a, b)`` = a if x ≠ 0 else b).

``parse_expression(text, variables, where)`` returns an SX expression of the given SX variables; any unknown
function, variable or token is a ``TrajoptInputError`` naming ``where`` and the token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import casadi as ca

from trajopt.errors import TrajoptInputError

_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
                    r"|(?P<op>[-+*/^(),]))")


def _step(x):
    return ca.if_else(x >= 0, 1.0, 0.0)


FUNCTIONS = {
    "sqrt": (1, ca.sqrt), "exp": (1, ca.exp), "log": (1, ca.log), "sin": (1, ca.sin), "cos": (1, ca.cos),
    "sec": (1, lambda x: 1 / ca.cos(x)), "csc": (1, lambda x: 1 / ca.sin(x)), "tan": (1, ca.tan),
    "cot": (1, lambda x: 1 / ca.tan(x)), "asin": (1, ca.asin), "acos": (1, ca.acos), "atan": (1, ca.atan),
    "atan2": (2, ca.atan2), "sinh": (1, ca.sinh), "cosh": (1, ca.cosh), "tanh": (1, ca.tanh), "erf": (1, ca.erf),
    "erfc": (1, lambda x: 1 - ca.erf(x)), "step": (1, _step), "delta": (1, lambda x: ca.if_else(x == 0, 1.0, 0.0)),
    "square": (1, lambda x: x * x), "cube": (1, lambda x: x * x * x), "recip": (1, lambda x: 1 / x),
    "min": (2, ca.fmin), "max": (2, ca.fmax), "abs": (1, ca.fabs), "floor": (1, ca.floor), "ceil": (1, ca.ceil),
    "select": (3, lambda x, a, b: ca.if_else(x != 0, a, b)),
}


@dataclass
class _Parser:
    text: str
    variables: dict
    where: str
    tokens: list
    position: int = 0

    def error(self, message: str) -> TrajoptInputError:
        return TrajoptInputError(f"{self.where}: expression '{self.text}': {message}")

    def peek(self):
        return self.tokens[self.position] if self.position < len(self.tokens) else (None, None)

    def take(self, expected=None, description=None):
        """The next token; with ``expected``, it must be that operator."""
        kind, value = self.peek()
        if kind is None:
            raise self.error(f"unexpected end (expected {description or repr(expected) if expected else 'more'})")
        if expected is not None and value != expected:
            raise self.error(f"expected '{expected}' but found '{value}'")
        self.position += 1
        return kind, value

    def expression(self):  # + and -, left to right
        value = self.term()
        while self.peek()[1] in ("+", "-"):
            _, op = self.take()
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self):  # * and /, left to right
        value = self.unary()
        while self.peek()[1] in ("*", "/"):
            _, op = self.take()
            right = self.unary()
            value = value * right if op == "*" else value / right
        return value

    def unary(self):  # unary minus binds looser than ^
        if self.peek()[1] == "-":
            self.take()
            return -self.unary()
        if self.peek()[1] == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self):  # ^ groups to the right; its exponent may carry a unary minus
        base = self.atom()
        if self.peek()[1] == "^":
            self.take()
            return base ** self.unary()
        return base

    def atom(self):
        kind, value = self.take(description="a number, name or '('")
        if kind == "number":
            return ca.SX(float(value))
        if kind == "op":
            if value != "(":
                raise self.error(f"unexpected '{value}'")
            inner = self.expression()
            self.take(")")
            return inner
        if self.peek()[1] == "(":
            return self.call(value)
        if value not in self.variables:
            raise self.error(f"unknown variable '{value}' (known: {sorted(self.variables)})")
        return self.variables[value]

    def call(self, name):
        if name not in FUNCTIONS:
            raise self.error(f"unknown function '{name}'")
        count, function = FUNCTIONS[name]
        self.take("(")
        arguments = [self.expression()]
        while self.peek()[1] == ",":
            self.take()
            arguments.append(self.expression())
        self.take(")")
        if len(arguments) != count:
            raise self.error(f"function '{name}' takes {count} argument(s), got {len(arguments)}")
        return function(*arguments)


def _tokens(text: str, where: str) -> list:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise TrajoptInputError(f"{where}: expression '{text}': cannot read '{text[position:].strip()[:20]}'")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def parse_expression(text: str, variables: dict, where: str = "expression") -> ca.SX:
    """The Lepton expression ``text`` as an SX expression of ``variables`` (name -> SX)."""
    parser = _Parser(text, dict(variables), where, _tokens(text, where))
    if not parser.tokens:
        raise parser.error("empty expression")
    value = parser.expression()
    if parser.position != len(parser.tokens):
        raise parser.error(f"unexpected '{parser.tokens[parser.position][1]}'")
    return ca.SX(value)
