// The binding of the fast extension build (docs/toolchains.md, "Fast extension
// builds"), compiled once per toolchain and flag set with PyTorch's full headers and
// linked into every candidate built that way. It makes the Python module of a
// candidate's PYBIND11_MODULE body (module.h): one Python function per name, whose
// calls load each argument with pybind11's caster of the parameter's exact C++ type,
// try overloads in pybind11's order (without conversions first when there are several,
// then with), call the candidate's function and turn its result into what pybind11
// would return. Exceptions propagate through pybind11's translation unchanged.
#include <torch/extension.h>

#include <memory>
#include <string>
#include <vector>

#include "module.h"

namespace py = pybind11;

namespace kvault_ext {
namespace {

// One argument loaded by pybind11's caster of type T.
class Loaded {
 public:
  virtual ~Loaded() = default;
  virtual bool Load(py::handle h, bool convert) = 0;
  virtual void* Get() = 0;  // the loaded T; valid while this lives
};

template <class T>
class LoadedAs final : public Loaded {
 public:
  bool Load(py::handle h, bool convert) override { return caster_.load(h, convert); }
  void* Get() override { return &py::detail::cast_op<T&>(caster_); }

 private:
  py::detail::make_caster<T> caster_;
};

std::unique_ptr<Loaded> MakeLoaded(Arg a) {
  switch (a) {
    case Arg::kTensor: return std::make_unique<LoadedAs<at::Tensor>>();
    case Arg::kOptionalTensor: return std::make_unique<LoadedAs<c10::optional<at::Tensor>>>();
    case Arg::kTensorList: return std::make_unique<LoadedAs<std::vector<at::Tensor>>>();
    case Arg::kInt: return std::make_unique<LoadedAs<int>>();
    case Arg::kInt64: return std::make_unique<LoadedAs<int64_t>>();
    case Arg::kDouble: return std::make_unique<LoadedAs<double>>();
    case Arg::kFloat: return std::make_unique<LoadedAs<float>>();
    case Arg::kBool: return std::make_unique<LoadedAs<bool>>();
    case Arg::kIntList: return std::make_unique<LoadedAs<std::vector<int64_t>>>();
    case Arg::kIntArrayRef: return std::make_unique<LoadedAs<at::IntArrayRef>>();
    case Arg::kString: return std::make_unique<LoadedAs<std::string>>();
    case Arg::kOptionalInt64: return std::make_unique<LoadedAs<c10::optional<int64_t>>>();
    case Arg::kOptionalDouble: return std::make_unique<LoadedAs<c10::optional<double>>>();
  }
  throw std::logic_error("kvault_ext: unknown parameter kind " + std::to_string(static_cast<int>(a)));
}

// The parameter's type as pybind11 spells it in a signature.
std::string TypeName(Arg a) {
  switch (a) {
    case Arg::kTensor: return "at::Tensor";
    case Arg::kOptionalTensor: return "Optional[at::Tensor]";
    case Arg::kTensorList: return "List[at::Tensor]";
    case Arg::kInt:
    case Arg::kInt64: return "int";
    case Arg::kDouble:
    case Arg::kFloat: return "float";
    case Arg::kBool: return "bool";
    case Arg::kIntList: return "List[int]";
    case Arg::kIntArrayRef: return "Tuple[int, ...]";
    case Arg::kString: return "str";
    case Arg::kOptionalInt64: return "Optional[int]";
    case Arg::kOptionalDouble: return "Optional[float]";
  }
  return "?";
}

// What pybind11 returns for the C++ value the IValue holds (module.h's Returnable).
py::object ToPython(const c10::IValue& v) {
  if (v.isNone()) return py::none();
  if (v.isTensor()) return py::cast(v.toTensor());
  if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements();
    py::tuple t(elements.size());
    for (size_t i = 0; i < elements.size(); ++i) t[i] = ToPython(elements[i]);
    return std::move(t);
  }
  if (v.isTensorList()) {
    py::list l;
    for (const at::Tensor& t : v.toTensorVector()) l.append(py::cast(t));
    return std::move(l);
  }
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isDouble()) return py::float_(v.toDouble());
  throw std::logic_error("kvault_ext: unexpected return value of kind " + v.tagKind());
}

struct Overloads {
  std::string name;
  std::vector<Function> functions;
};

[[noreturn]] void NoMatch(const Overloads& o, const py::args& args, const py::kwargs& kwargs) {
  std::string msg = o.name + "(): incompatible function arguments. The following argument types are supported:\n";
  int n = 0;
  for (const Function& f : o.functions) {
    msg += "    " + std::to_string(++n) + ". (";
    for (size_t i = 0; i < f.args.size(); ++i)
      msg += (i ? ", arg" : "arg") + std::to_string(i) + ": " + TypeName(f.args[i]);
    msg += ")\n";
  }
  msg += "\nInvoked with: ";
  for (size_t i = 0; i < args.size(); ++i) msg += (i ? ", " : "") + py::repr(args[i]).cast<std::string>();
  if (kwargs.size() > 0) msg += (args.size() ? ", kwargs: " : "kwargs: ") + py::repr(kwargs).cast<std::string>();
  throw py::type_error(msg);
}

py::object Dispatch(const Overloads& o, const py::args& args, const py::kwargs& kwargs) {
  if (kwargs.size() == 0) {
    // Like pybind11: several overloads get a pass without implicit conversions first.
    for (int pass = o.functions.size() > 1 ? 0 : 1; pass < 2; ++pass) {
      for (const Function& f : o.functions) {
        if (args.size() != f.args.size()) continue;
        std::vector<std::unique_ptr<Loaded>> loaded;
        std::vector<void*> values;
        for (size_t i = 0; i < f.args.size(); ++i) {
          loaded.push_back(MakeLoaded(f.args[i]));
          if (!loaded.back()->Load(args[i], pass == 1)) break;
          values.push_back(loaded.back()->Get());
        }
        if (values.size() != f.args.size()) continue;
        c10::IValue result;
        f.thunk(f.callable.get(), values.data(), &result);
        return ToPython(result);
      }
    }
  }
  NoMatch(o, args, kwargs);
}

}  // namespace

PyObjectPtr InitModule(const char* name, Body body) {
  PYBIND11_CHECK_PYTHON_VERSION
  PYBIND11_ENSURE_INTERNALS_READY
  auto* def = new py::module_::module_def();  // one per module, for the process's life
  auto m = py::module_::create_extension_module(name, nullptr, def);
  try {
    std::vector<Function> functions;
    Module module(&functions);
    body(module);
    std::vector<std::shared_ptr<Overloads>> by_name;
    for (Function& f : functions) {
      std::shared_ptr<Overloads> o;
      for (const auto& have : by_name)
        if (have->name == f.name) o = have;
      if (!o) {
        o = std::make_shared<Overloads>();
        o->name = f.name;
        by_name.push_back(o);
      }
      o->functions.push_back(std::move(f));
    }
    for (const auto& o : by_name) {
      std::string doc;
      for (const Function& f : o->functions) doc += (doc.empty() ? "" : "\n") + f.doc;
      m.def(
          o->name.c_str(),
          [o](const py::args& args, const py::kwargs& kwargs) { return Dispatch(*o, args, kwargs); },
          doc.c_str());
    }
    return m.ptr();
  }
  PYBIND11_CATCH_INIT_EXCEPTIONS
}

}  // namespace kvault_ext
