/* SPDX-License-Identifier: MIT */
/*
 * reader_demangle_ms.cpp - LLVM 14's Microsoft demangler, printing only
 * names whose output is bounded.
 *
 * llvm::microsoftDemangle() parses into a tree whose back references (the
 * digits naming an earlier parameter type or name) share nodes, and each
 * template argument list starts a fresh table of them, so a 255-byte "?"
 * name nesting a few templates of doubling function types prints gigabytes.
 * This file does what microsoftDemangle() does (Demangler::parse, then the
 * tree's output() with llvm-symbolizer's flags) with one step between: a
 * walk of the tree adding up an upper bound of what each node prints, which
 * stops and refuses the name once the sum passes the output budget or the
 * walk passes the depth budget.  Each node visited adds at least kOwnText,
 * so the walk visits at most output_max / kOwnText nodes and needs no memo.
 * The input is at most 4 KiB (reader_demangle.h), which bounds the parser's
 * own recursion and tree.
 */
#include <cstdint>
#include <cstring>

#include <llvm/Demangle/Demangle.h>
#include <llvm/Demangle/MicrosoftDemangle.h>
#include <llvm/Demangle/MicrosoftDemangleNodes.h>
#include <llvm/Demangle/Utility.h>

#include "reader_demangle.h"

using namespace llvm::ms_demangle;
using llvm::itanium_demangle::OutputBuffer;
using llvm::itanium_demangle::StringView;

namespace {

/*
 * What one node prints of its own besides its children and names: at most
 * about 100 bytes (an RTTI base class descriptor with four numbers, a thunk
 * adjustor with four, qualifiers "const volatile __restrict __unaligned",
 * the longest operator names); 128 bounds them all.
 */
constexpr uint64_t kOwnText = 128;

struct MsBound {
	uint64_t output_max;
	unsigned depth_max;
	uint64_t len = 0;
	bool over = false;

	void add(uint64_t n)
	{
		len += n;
		if (len > output_max)
			over = true;
	}

	void walk(const Node *n, unsigned depth)
	{
		if (!n || over)
			return;
		if (depth >= depth_max) {
			over = true;
			return;
		}
		add(kOwnText);
		depth++;
		switch (n->kind()) {
		case NodeKind::PrimitiveType:
		case NodeKind::IntrinsicType:
		case NodeKind::IntegerLiteral:
		case NodeKind::Unknown:
			break;
		case NodeKind::FunctionSignature:
		case NodeKind::ThunkSignature: {
			auto *f = static_cast<const FunctionSignatureNode *>(n);
			walk(f->ReturnType, depth);
			walk(f->Params, depth);
			break;
		}
		case NodeKind::Identifier:
		case NodeKind::VcallThunkIdentifier:
		case NodeKind::LocalStaticGuardIdentifier:
		case NodeKind::IntrinsicFunctionIdentifier:
		case NodeKind::RttiBaseClassDescriptor:
			identifier(static_cast<const IdentifierNode *>(n), depth);
			break;
		case NodeKind::NamedIdentifier:
			add(static_cast<const NamedIdentifierNode *>(n)->Name.size());
			identifier(static_cast<const IdentifierNode *>(n), depth);
			break;
		case NodeKind::LiteralOperatorIdentifier:
			add(static_cast<const LiteralOperatorIdentifierNode *>(n)->Name.size());
			identifier(static_cast<const IdentifierNode *>(n), depth);
			break;
		case NodeKind::ConversionOperatorIdentifier:
			walk(static_cast<const ConversionOperatorIdentifierNode *>(n)->TargetType, depth);
			identifier(static_cast<const IdentifierNode *>(n), depth);
			break;
		case NodeKind::DynamicStructorIdentifier: {
			auto *d = static_cast<const DynamicStructorIdentifierNode *>(n);
			walk(d->Variable, depth);
			walk(d->Name, depth);
			identifier(d, depth);
			break;
		}
		case NodeKind::StructorIdentifier:
			walk(static_cast<const StructorIdentifierNode *>(n)->Class, depth);
			identifier(static_cast<const IdentifierNode *>(n), depth);
			break;
		case NodeKind::PointerType: {
			auto *p = static_cast<const PointerTypeNode *>(n);
			walk(p->ClassParent, depth);
			walk(p->Pointee, depth);
			break;
		}
		case NodeKind::TagType:
			walk(static_cast<const TagTypeNode *>(n)->QualifiedName, depth);
			break;
		case NodeKind::ArrayType: {
			auto *a = static_cast<const ArrayTypeNode *>(n);
			walk(a->Dimensions, depth);
			walk(a->ElementType, depth);
			break;
		}
		case NodeKind::Custom:
			walk(static_cast<const CustomTypeNode *>(n)->Identifier, depth);
			break;
		case NodeKind::NodeArray: {
			auto *a = static_cast<const NodeArrayNode *>(n);
			for (size_t i = 0; i < a->Count && !over; i++) {
				add(2); /* ", " or "::" */
				walk(a->Nodes[i], depth);
			}
			break;
		}
		case NodeKind::QualifiedName:
			walk(static_cast<const QualifiedNameNode *>(n)->Components, depth);
			break;
		case NodeKind::TemplateParameterReference:
			walk(static_cast<const TemplateParameterReferenceNode *>(n)->Symbol, depth);
			break;
		case NodeKind::EncodedStringLiteral:
			add(static_cast<const EncodedStringLiteralNode *>(n)->DecodedString.size());
			walk(static_cast<const SymbolNode *>(n)->Name, depth);
			break;
		case NodeKind::Md5Symbol:
		case NodeKind::LocalStaticGuardVariable:
			walk(static_cast<const SymbolNode *>(n)->Name, depth);
			break;
		case NodeKind::FunctionSymbol: {
			auto *f = static_cast<const FunctionSymbolNode *>(n);
			walk(f->Name, depth);
			walk(f->Signature, depth);
			break;
		}
		case NodeKind::VariableSymbol: {
			auto *v = static_cast<const VariableSymbolNode *>(n);
			walk(v->Name, depth);
			walk(v->Type, depth);
			break;
		}
		case NodeKind::SpecialTableSymbol: {
			auto *s = static_cast<const SpecialTableSymbolNode *>(n);
			walk(s->Name, depth);
			walk(s->TargetName, depth);
			break;
		}
		}
	}

	void identifier(const IdentifierNode *id, unsigned depth) { walk(id->TemplateParams, depth); }
};

/*
 * The parser itself renders every class template instance it reads into a
 * string, to remember it for back references, so the walk above comes too
 * late for a name whose templates nest function types: inside a template's
 * arguments, nine function parameters can each double the previous one
 * (back references "0".."9"), and a template nested in another multiplies
 * that again; three levels made LLVM's parser allocate 24 GB for a 255-byte
 * name.  One template level of that is at most 2^9 times the 4 KiB input
 * (2 MiB), so a name is refused only when it holds two template openings
 * ("?$") and a function type (a '6'..'9' after a pointer, reference or
 * "$$A" marker): nested templates over function types, which real
 * symbols hardly ever are.
 */
static bool ms_may_expand(const char *s, size_t len)
{
	size_t templates = 0;
	bool function = false;
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] == '?' && s[i + 1] == '$')
			templates++;
		if (std::strchr("PQRSA$", s[i]) && s[i + 1] >= '6' && s[i + 1] <= '9')
			function = true;
	}
	return templates >= 2 && function;
}

} // namespace

extern "C" int rd_ms_demangle(const char *name, size_t len, char **buf, size_t *cap,
			      const struct rd_demangle_limits *lim)
{
	if (len > lim->ms_input_max || ms_may_expand(name, len))
		return 0;
	Demangler d;
	StringView in(name, name + len);
	SymbolNode *ast = d.parse(in);
	if (d.Error || !ast)
		return 0;
	MsBound bound{lim->output_max, lim->depth_max};
	bound.walk(ast, 0);
	if (bound.over)
		return 0;
	/* llvm-symbolizer's flags (LLVMSymbolizer::DemangleName). */
	OutputFlags flags = OutputFlags(OF_NoAccessSpecifier | OF_NoCallingConvention |
					OF_NoMemberType | OF_NoReturnType);
	OutputBuffer ob(*buf, *cap);
	ast->output(ob, flags);
	ob += '\0';
	*buf = ob.getBuffer();
	*cap = ob.getBufferCapacity();
	return 1;
}
