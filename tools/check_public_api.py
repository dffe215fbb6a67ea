#!/usr/bin/env python3
"""Checks that no public header names a `detail` type in a public declaration.

The public headers are the contract (docs/architecture.md, "The public API"): everything a user needs is
declared there, and what is internal sits in a `detail` namespace (or a `detail/` folder), reached by the
layers above through `zkr::detail::access`, not through public members. This check reads every header under
`<layer>/include/zkr` outside `detail/` and reports each declaration that is public to a user (a public or
struct member, or a declaration in a namespace that is not `detail`) and names `detail::` in its signature:
return type, parameters, default arguments, base classes, aliases. Function bodies are not signatures and are
skipped (an inline template may call into `detail`). Private and protected members, friends, everything
inside a `detail` namespace, and specializations of another library's traits in its own namespace
(`boost::asio::async_result` for our token adapter) are not public.

A light C++ scanner, not a compiler: it knows namespaces, classes, access specifiers, enums, function bodies
and brace initializers, which is all a header of this project uses.

Usage: check_public_api.py <include-dir>...   (exit 1 with one line per finding, 0 when clean)
"""
import pathlib
import re
import sys

CLASS_HEAD = re.compile(
    r"(?:template\s*<.*>\s*)?(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(\w+)(?:\s+final)?\s*(?::[^(){}]*)?$",
    re.S)
ENUM_HEAD = re.compile(r"enum\b")
NAMESPACE_HEAD = re.compile(r"(?:inline\s+)?namespace\s*([\w:]*)\s*$")


def strip_comments(text):
    """Blanks comments, string and character literals (keeping newlines, so line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_preprocessor(text):
    return "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))


def matching_brace(text, i):
    """Index just past the brace that closes the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def strip_angles(decl):
    """`decl` without its template argument lists (innermost first), which may hold parentheses of their own:
    `completion_token_for<void(error_code)>`."""
    decl = re.sub(r"\[\[[^\]]*\]\]", "", decl)
    while True:
        shorter = re.sub(r"<[^<>]*>", "", decl)
        if shorter == decl:
            return decl
        decl = shorter


def top_level_paren(decl):
    """True when `decl` has a '(' outside any <...> or [...] (a function or a call, not a class head)."""
    return "(" in strip_angles(decl)


def open_parens(decl):
    """How many '(' of `decl` are still open: a '{' met there is a brace initializer inside a parameter list
    (`Token&& token = {}`) or an argument, never a body."""
    return decl.count("(") - decl.count(")")


class Scope:
    def __init__(self, kind, public, in_detail):
        self.kind = kind  # "namespace" or "class"
        self.public = public  # the current access is public (namespace scopes: not in detail)
        self.in_detail = in_detail


def check(path):
    text = strip_preprocessor(strip_comments(path.read_text()))
    findings = []
    scopes = [Scope("namespace", True, False)]
    decl_start, i, n = 0, 0, len(text)

    def visible():
        return all(s.public for s in scopes) and not scopes[-1].in_detail

    def report(decl, at):
        flat = " ".join(decl.split())
        if not flat or flat.startswith("friend ") or not visible():
            return
        if re.search(r"\bdetail::", flat):
            line = text.count("\n", 0, at) + 1
            findings.append(f"{path}:{line}: {flat[:160]}")

    while i < n:
        c = text[i]
        decl = text[decl_start:i]
        if c == ";":
            report(decl, decl_start)
            i += 1
            decl_start = i
        elif c == ":" and text[i + 1:i + 2] != ":" and text[i - 1:i] != ":" and \
                decl.strip() in ("public", "private", "protected") and scopes[-1].kind == "class":
            scopes[-1].public = decl.strip() == "public"
            i += 1
            decl_start = i
        elif c == "}":
            report(decl, decl_start)
            scopes.pop()
            i += 1
            # `};` or `} name;` closes the declaration that opened the scope
            while i < n and text[i] in " \t\n":
                i += 1
            if i < n and text[i] == ";":
                i += 1
            decl_start = i
        elif c == "{":
            head = decl.strip()
            ns = NAMESPACE_HEAD.match(head)
            if open_parens(head) > 0:
                i = matching_brace(text, i)  # a default argument `= {}` or a braced argument
            elif ns or head == 'extern " "' or head.startswith("extern"):
                name = ns.group(1) if ns else ""
                # A namespace of another library (`boost::asio`) holds trait specializations for our types
                # (`async_result`, `associator`): its machinery, not an API of ours, so it is not checked.
                foreign = len(scopes) == 1 and name.split("::")[0] not in ("zkr", "")
                in_detail = scopes[-1].in_detail or foreign or "detail" in name.split("::")
                scopes.append(Scope("namespace", True, in_detail))
                i += 1
                decl_start = i
            elif CLASS_HEAD.match(head) and not top_level_paren(head):
                report(head, decl_start)  # the class head: its bases
                is_struct = re.search(r"\b(struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?\w+(?:\s+final)?\s*(?::[^(){}]*)?$", head)
                scopes.append(Scope("class", bool(is_struct), scopes[-1].in_detail))
                i += 1
                decl_start = i
            elif ENUM_HEAD.match(head):
                report(head, decl_start)
                i = matching_brace(text, i)
                # an enum ends with ';' next, which reports nothing new
            elif top_level_paren(head) and not re.search(r"=\s*[^=]*$", strip_angles(head).split("(")[0]):
                # A function definition: check the signature, skip the body; no ';' follows.
                report(head, decl_start)
                i = matching_brace(text, i)
                decl_start = i
            else:
                # A brace initializer, or a lambda in one: part of the declaration, ends with ';'.
                i = matching_brace(text, i)
        else:
            i += 1
    return findings


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    findings = []
    count = 0
    for root in argv[1:]:
        for header in sorted(pathlib.Path(root).rglob("*.hpp")):
            if "detail" in header.relative_to(root).parts:
                continue
            count += 1
            findings += check(header)
    for f in findings:
        print(f)
    if findings:
        print(f"check_public_api: {len(findings)} public declaration(s) name a detail type "
              f"({count} headers read)", file=sys.stderr)
        return 1
    print(f"check_public_api: {count} public headers, no detail type in a public declaration")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
