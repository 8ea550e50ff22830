"""Symbol extraction per language: each pattern pinned on a definition and on the statements
and calls that look like one."""

from __future__ import annotations

import time

import pytest

from rankscope.suite.symbols import symbols_in


@pytest.mark.parametrize(
    ("suffix", "source", "expected"),
    [
        (
            ".cpp",
            "bool World::DetectCollision(const Body& a) {\n  if (x) {\n  foo(1);\n"
            "  return bar(x);\n}\nstatic inline int helper(int x)\nclass Foo : public Bar {\n"
            "namespace physics {\n",
            ["World::DetectCollision", "DetectCollision", "helper", "Foo", "physics"],
        ),
        (
            ".c",
            "int main(int argc, char **argv)\n{\nstatic void *worker(void *arg) {\n"
            'printf("x");\n#define MAX(a,b) ((a)>(b)?(a):(b))\nint f(void);\n',
            ["main", "worker"],
        ),
        (
            ".java",
            "public class App {\n  public static void main(String[] args) {\n"
            "  private int computeTotal(List<Integer> xs) throws IOException {\n"
            "    for (int i = 0; i < 3; i++) {\n    } else if (y) {\n  @Override\n"
            "  public String toString() {\n    list.add(x);\n",
            ["App", "main", "computeTotal", "toString"],
        ),
        (
            ".ts",
            "export function render(x) {\nexport default class Widget extends Base {\n"
            "const add = (a, b) => a + b;\n"
            "export const fetchAll = async (url: string): Promise<void> => {\n"
            "let handler = function (e) {\n  handleClick(event) {\n  foo(1);\n"
            "const n = compute(3);\ninterface Props {\ntype Alias = string;\n",
            ["render", "Widget", "add", "fetchAll", "handler", "handleClick", "Props", "Alias"],
        ),
        (
            ".go",
            "func (r *Router) ServeHTTP(w http.ResponseWriter) {\nfunc main() {\n"
            "type Config struct {\n\tfmt.Println(x)\n",
            ["ServeHTTP", "main", "Config"],
        ),
        (
            ".rs",
            "pub fn detect_collision(a: &Body) -> bool {\npub(crate) struct World {\n"
            "impl World {\npub enum Shape {\nmacro_rules! square {\n    let x = f(1);\n",
            ["detect_collision", "World", "Shape", "square"],
        ),
        (
            ".py",
            "class Parser:\n    def parse_line(self):\n    x = call(1)\n",
            ["Parser", "parse_line"],
        ),
    ],
)
def test_definitions_per_language(suffix: str, source: str, expected: list[str]) -> None:
    assert symbols_in(source, suffix) == expected


def test_c_family_rules_apply_only_to_c_family_files() -> None:
    # A Python call that would read as a C definition is no symbol in a .py file.
    assert symbols_in("int helper(int x) {\n", ".py") == []
    assert symbols_in("int helper(int x) {\n", ".CPP") == ["helper"]


def test_hostile_lines_cost_linear_time() -> None:
    text = "a" * 5_000_000 + "\n" + "int f" + "::a" * 100_000 + "(\n" + "x\0\ud800(" * 1000
    start = time.perf_counter()
    assert symbols_in(text, ".cpp") == []
    assert time.perf_counter() - start < 2.0
