/* The website checkers' per-element work in C: one walk over a selectolax (lexbor) tree,
 * and three counts over large strings.
 *
 * Walking 24,000 elements in Python costs more than parsing them. walk() visits lexbor's
 * nodes once and returns what the checks read: LexborNode objects of the rarer tags (made
 * by selectolax's own constructor, LexborNode.new, from the type's Cython vtable), counts
 * of others, each heading's level and text, each link's href, rel and text, some
 * attributes of each image, the attribute names in use, the DOM size and the body's text,
 * all decoded as selectolax decodes them (UTF-8, invalid bytes replaced).
 * word_stats(), count_words() and count_netlocs() count words and link hosts without a
 * Python object per word or link.
 *
 * It reads lexbor's nodes through the functions selectolax's extension exports and, for
 * the hot fields, directly: bind() and the check_*() functions must pass first;
 * toolrun/tools/web/treewalk.py runs them at import and checks a walk's results against
 * selectolax's own API.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef struct lexbor_node lexbor_node;
typedef struct lexbor_attr lexbor_attr;
typedef unsigned char lexbor_char;

enum { ELEMENT_NODE = 1, TEXT_NODE = 3 };

/* What walk() does with an element, by tag id (the ``kinds`` table). */
enum {
    KIND_NONE = 0,
    KIND_LISTED = 1,   /* appended to each list of routes[tag_id] */
    KIND_HIDDEN = 2,   /* script, style, template, noscript: noted, subtree not indexed */
    KIND_LINK = 3,     /* <a>: read (attributes, href, rel, text), or listed if not reading */
    KIND_IMAGE = 4,    /* <img>: read (image_column_names), or listed if not reading */
    KIND_COUNTED = 5,  /* only counted */
    KIND_HEADING = 10, /* 11..16: h1..h6, their level (and text) read */
};

static lexbor_node *(*node_first_child)(lexbor_node *);
static lexbor_node *(*node_next)(lexbor_node *);
static lexbor_node *(*node_parent)(lexbor_node *);
static uintptr_t (*node_tag_id)(lexbor_node *);
static int (*node_type)(lexbor_node *);
static lexbor_attr *(*element_first_attribute)(lexbor_node *);
static lexbor_attr *(*element_next_attribute)(lexbor_attr *);
static const lexbor_char *(*attr_qualified_name)(lexbor_attr *, size_t *);
static const lexbor_char *(*attr_value)(lexbor_attr *, size_t *);
static lexbor_char *(*node_text_content)(lexbor_node *, size_t *);
static void *(*document_destroy_text)(lexbor_node *, lexbor_char *);
static PyObject *(*new_node)(lexbor_node *, PyObject *);

/* The fields of lexbor's lxb_dom_node_t (selectolax/lexbor.pxd), read directly in the walk:
 * a call per field per node through the exported functions costs as much as the rest of the
 * walk. check_node_layout() compares them with those functions on a probe document. */
typedef struct {
    void *events;
    uintptr_t local_name; /* an element's tag id */
    uintptr_t prefix, ns;
    void *owner_document;
    lexbor_node *next, *prev, *parent, *first_child, *last_child;
    void *user;
    int type;
} NodeFields;

#define FIELDS(node) ((const NodeFields *)(node))

/* Where a text node keeps its characters: a lexbor_str_t right after the node's fields
 * (lxb_dom_character_data_t); the offset is found and checked by
 * check_text_offset(). */
typedef struct {
    lexbor_char *data;
    size_t length;
} LexborString;
static size_t text_offset;

static const LexborString *text_data(lexbor_node *text) {
    return (const LexborString *)((const char *)text + text_offset);
}

static PyObject *empty_text;

/* The image attributes read into columns (treewalk.IMAGE_COLUMNS), "src" first. */
static const char *const image_column_names[] = {"src", "alt", "width", "height", "style"};
#define IMAGE_COLUMNS 5

static int bind_symbol(void *library, const char *name, void **target) {
    *target = dlsym(library, name);
    if (*target == NULL) {
        PyErr_Format(PyExc_ImportError, "selectolax's lexbor does not export %s", name);
        return -1;
    }
    return 0;
}

static PyObject *bind(PyObject *module, PyObject *args) {
    const char *path;
    PyObject *vtable;
    if (!PyArg_ParseTuple(args, "sO!", &path, &PyCapsule_Type, &vtable)) {
        return NULL;
    }
    /* The extension is already loaded by ``import selectolax.lexbor``: take its handle. */
    void *library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (library == NULL) {
        PyErr_Format(PyExc_ImportError, "selectolax's lexbor is not loaded: %s", dlerror());
        return NULL;
    }
    const struct {
        const char *name;
        void **target;
    } symbols[] = {
        {"lxb_dom_node_first_child_noi", (void **)&node_first_child},
        {"lxb_dom_node_next_noi", (void **)&node_next},
        {"lxb_dom_node_parent_noi", (void **)&node_parent},
        {"lxb_dom_node_tag_id_noi", (void **)&node_tag_id},
        {"lxb_dom_node_type_noi", (void **)&node_type},
        {"lxb_dom_element_first_attribute_noi", (void **)&element_first_attribute},
        {"lxb_dom_element_next_attribute_noi", (void **)&element_next_attribute},
        {"lxb_dom_attr_qualified_name", (void **)&attr_qualified_name},
        {"lxb_dom_attr_value_noi", (void **)&attr_value},
        {"lxb_dom_node_text_content", (void **)&node_text_content},
        {"lxb_dom_document_destroy_text_noi", (void **)&document_destroy_text},
    };
    for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
        if (bind_symbol(library, symbols[i].name, symbols[i].target) < 0) {
            dlclose(library);
            return NULL;
        }
    }
    dlclose(library); /* the module keeps the extension loaded */
    /* LexborNode.new is the first entry of the type's vtable (selectolax/lexbor.pxd). */
    void **entries = PyCapsule_GetPointer(vtable, NULL);
    if (entries == NULL) {
        return NULL;
    }
    new_node = (PyObject * (*)(lexbor_node *, PyObject *)) entries[0];
    Py_RETURN_NONE;
}

/* check_node_layout(root_address) -> bool: whether NodeFields reads what lexbor's
 * functions return, for every node below the root (included). */
static PyObject *check_node_layout(PyObject *module, PyObject *address) {
    lexbor_node *root = (lexbor_node *)PyLong_AsVoidPtr(address), *node = root;
    if (root == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_False);
    }
    while (node != NULL) {
        const NodeFields *fields = FIELDS(node);
        if (fields->first_child != node_first_child(node) || fields->next != node_next(node) ||
            fields->parent != node_parent(node) || fields->type != node_type(node) ||
            fields->local_name != node_tag_id(node)) {
            Py_RETURN_FALSE;
        }
        lexbor_node *next = node_first_child(node);
        while (next == NULL && node != root) {
            next = node_next(node);
            node = next == NULL ? node_parent(node) : node;
        }
        node = next;
    }
    Py_RETURN_TRUE;
}

/* check_text_offset(text_node_address) -> bool: whether a text node's characters are where
 * text_data() reads them (compared with lexbor's own copy); the offset is kept if so. */
static PyObject *check_text_offset(PyObject *module, PyObject *args) {
    unsigned long long address;
    Py_ssize_t offset;
    if (!PyArg_ParseTuple(args, "Kn", &address, &offset)) {
        return NULL;
    }
    lexbor_node *node = (lexbor_node *)(uintptr_t)address, *document = node;
    if (node_type(node) != TEXT_NODE || offset < 0) {
        Py_RETURN_FALSE;
    }
    while (node_parent(document) != NULL) {
        document = node_parent(document);
    }
    size_t length = 0;
    lexbor_char *copy = node_text_content(node, &length);
    if (copy == NULL) {
        Py_RETURN_FALSE;
    }
    const LexborString *text = (const LexborString *)((const char *)node + offset);
    /* the length is compared first: the pointer beside it is read only if it matches */
    int fits = length > 0 && text->length == length && text->data != NULL &&
               memcmp(text->data, copy, length) == 0;
    document_destroy_text(document, copy);
    if (fits) {
        text_offset = (size_t)offset;
    }
    return PyBool_FromLong(fits);
}

static PyObject *decode(const lexbor_char *data, size_t length) {
    return PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)length, "replace");
}

/* Short texts a walk has already made (link texts like "read more", image sizes like "640"
 * repeat by the thousand on big pages): equal ones are one str, made and freed once. The
 * walk runs with the GIL held, so one table serves every walk; forget_texts() empties it. */
#define TEXT_TABLE 1024 /* a power of two */
#define TEXT_PROBES 8
#define SHORT_TEXT 32
typedef struct {
    PyObject *text;
    uint64_t hash;
    size_t length;
    lexbor_char bytes[SHORT_TEXT];
} KnownText;
static KnownText known_texts[TEXT_TABLE];

static PyObject *short_text(const lexbor_char *data, size_t length) {
    if (length == 0) {
        return Py_NewRef(empty_text);
    }
    if (length > SHORT_TEXT) {
        return decode(data, length);
    }
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < length; i++) {
        hash = (hash ^ data[i]) * 1099511628211ULL;
    }
    for (size_t probe = 0; probe < TEXT_PROBES; probe++) {
        KnownText *known = &known_texts[(hash + probe) & (TEXT_TABLE - 1)];
        if (known->text == NULL) {
            PyObject *text = decode(data, length);
            if (text != NULL) {
                known->text = Py_NewRef(text);
                known->hash = hash;
                known->length = length;
                memcpy(known->bytes, data, length);
            }
            return text;
        }
        if (known->hash == hash && known->length == length &&
            memcmp(known->bytes, data, length) == 0) {
            return Py_NewRef(known->text);
        }
    }
    return decode(data, length);
}

static void forget_texts(void) {
    for (size_t slot = 0; slot < TEXT_TABLE; slot++) {
        Py_CLEAR(known_texts[slot].text);
    }
}

/* lexbor's text_content (all descendant text, no separators): selectolax's text_lexbor. */
static PyObject *read_text(lexbor_node *node, lexbor_node *document) {
    size_t length = 0;
    lexbor_char *text = node_text_content(node, &length);
    if (text == NULL) {
        return Py_NewRef(empty_text);
    }
    PyObject *result = length ? decode(text, length) : Py_NewRef(empty_text);
    document_destroy_text(document, text);
    return result;
}

/* The distinct attribute names of a document, by lexbor's pointer to the name (one per
 * distinct name: lexbor keeps each name once per document); past TABLE_LOAD names, new ones
 * go to a Python set, decoded (still exact, slower). */
#define TABLE_SIZE 512
#define TABLE_LOAD 384
typedef struct {
    const lexbor_char *names[TABLE_SIZE];
    size_t lengths[TABLE_SIZE];
    int count;
    PyObject *overflow;
} NameSet;

static int add_name(NameSet *set, const lexbor_char *name, size_t length) {
    size_t slot = ((uintptr_t)name >> 3) % TABLE_SIZE;
    while (set->names[slot] != NULL) {
        if (set->names[slot] == name) {
            return 0;
        }
        slot = (slot + 1) % TABLE_SIZE;
    }
    if (set->count < TABLE_LOAD) {
        set->names[slot] = name;
        set->lengths[slot] = length;
        set->count++;
        return 0;
    }
    PyObject *key = decode(name, length);
    if (key == NULL) {
        return -1;
    }
    int status = PySet_Add(set->overflow, key);
    Py_DECREF(key);
    return status;
}

static int add_names(NameSet *set, lexbor_node *element) {
    for (lexbor_attr *attr = element_first_attribute(element); attr != NULL;
         attr = element_next_attribute(attr)) {
        size_t length = 0;
        const lexbor_char *name = attr_qualified_name(attr, &length);
        if (name != NULL && add_name(set, name, length) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The names as a frozenset of str (the set given is consumed). */
static PyObject *name_strings(NameSet *set) {
    for (size_t slot = 0; slot < TABLE_SIZE; slot++) {
        if (set->names[slot] != NULL) {
            PyObject *key = decode(set->names[slot], set->lengths[slot]);
            if (key == NULL || PySet_Add(set->overflow, key) < 0) {
                Py_XDECREF(key);
                return NULL;
            }
            Py_DECREF(key);
        }
    }
    return PyFrozenSet_New(set->overflow);
}

typedef struct {
    PyObject *heading_levels, *heading_texts, *hidden;
    PyObject *anchor_hrefs, *anchor_rels, *anchor_texts;
    PyObject *image_columns[IMAGE_COLUMNS]; /* one list per name of image_column_names */
    PyObject *image_srcs;
} Found;

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) {
        return -1;
    }
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

/* The values of a link's href and rel (new references; NULL when absent, None when
 * valueless). */
static int read_href_rel(lexbor_node *element, PyObject **href, PyObject **rel) {
    *href = *rel = NULL;
    for (lexbor_attr *attr = element_first_attribute(element); attr != NULL;
         attr = element_next_attribute(attr)) {
        size_t name_length = 0, value_length = 0;
        const lexbor_char *name = attr_qualified_name(attr, &name_length);
        PyObject **target = name_length == 4 && memcmp(name, "href", 4) == 0  ? href
                            : name_length == 3 && memcmp(name, "rel", 3) == 0 ? rel
                                                                               : NULL;
        if (target == NULL || *target != NULL) {
            continue;
        }
        const lexbor_char *data = attr_value(attr, &value_length);
        *target = data != NULL ? decode(data, value_length) : Py_NewRef(Py_None);
        if (*target == NULL) {
            Py_XDECREF(*href);
            Py_XDECREF(*rel);
            return -1;
        }
    }
    return 0;
}

static int read_anchor(Found *found, lexbor_node *node) {
    PyObject *href, *rel;
    if (read_href_rel(node, &href, &rel) < 0) {
        return -1;
    }
    /* href as CSS sees it: None without one, "" when valueless; rel None when valueless */
    PyObject *css_href = href == NULL ? Py_None : href == Py_None ? empty_text : href;
    int status = PyList_Append(found->anchor_hrefs, css_href) < 0 ||
                         PyList_Append(found->anchor_rels, rel != NULL ? rel : Py_None) < 0
                     ? -1
                     : 0;
    Py_XDECREF(href);
    Py_XDECREF(rel);
    return status;
}

/* An image's attributes of image_column_names, each appended to its column: the value,
 * None when the attribute has no value, False when the image does not have it. */
static int read_image(Found *found, lexbor_node *node) {
    PyObject *values[IMAGE_COLUMNS] = {NULL};
    int status = 0;
    for (lexbor_attr *attr = element_first_attribute(node); attr != NULL && status == 0;
         attr = element_next_attribute(attr)) {
        size_t name_length = 0, value_length = 0;
        const lexbor_char *name = attr_qualified_name(attr, &name_length);
        for (int column = 0; column < IMAGE_COLUMNS; column++) {
            const char *wanted = image_column_names[column];
            if (values[column] == NULL && strlen(wanted) == name_length &&
                memcmp(wanted, name, name_length) == 0) {
                const lexbor_char *data = attr_value(attr, &value_length);
                values[column] =
                    data != NULL ? short_text(data, value_length) : Py_NewRef(Py_None);
                status = values[column] == NULL ? -1 : 0;
                break;
            }
        }
    }
    for (int column = 0; column < IMAGE_COLUMNS; column++) {
        PyObject *value = values[column] != NULL ? values[column] : Py_False;
        if (status == 0 && PyList_Append(found->image_columns[column], value) < 0) {
            status = -1;
        }
    }
    /* the src as ``attributes.get("src")``: None when absent or valueless */
    PyObject *src = values[0] != NULL ? values[0] : Py_None;
    if (status == 0 && PyList_Append(found->image_srcs, src) < 0) {
        status = -1;
    }
    for (int column = 0; column < IMAGE_COLUMNS; column++) {
        Py_XDECREF(values[column]);
    }
    return status;
}

static int index_node(PyObject *routes, uintptr_t tag_id, PyObject *node) {
    PyObject *lists = PyList_GET_ITEM(routes, tag_id);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(lists); i++) {
        if (PyList_Append(PyTuple_GET_ITEM(lists, i), node) < 0) {
            return -1;
        }
    }
    return 0;
}

static void release(Found *found) {
    Py_XDECREF(found->heading_levels);
    Py_XDECREF(found->heading_texts);
    Py_XDECREF(found->hidden);
    Py_XDECREF(found->anchor_hrefs);
    Py_XDECREF(found->anchor_rels);
    Py_XDECREF(found->anchor_texts);
    for (int column = 0; column < IMAGE_COLUMNS; column++) {
        Py_XDECREF(found->image_columns[column]);
    }
    Py_XDECREF(found->image_srcs);
}

/* A growing byte buffer (PyMem). */
typedef struct {
    char *data;
    size_t length, capacity;
} Buffer;

static int buffer_add(Buffer *buffer, const void *data, size_t length) {
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (capacity < buffer->length + length) {
            capacity *= 2;
        }
        char *grown = PyMem_Realloc(buffer->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    return 0;
}

/* The text of a link or heading being walked through: its text nodes' characters, gathered
 * as the walk passes them (hidden elements' left out), stored at ``list[index]`` when the
 * walk leaves the element. Links and headings nest (a link in a heading). */
typedef struct {
    lexbor_node *node;
    PyObject *list;
    Py_ssize_t index;
    Buffer text;
} Capture;
#define MAX_CAPTURES 16

static Buffer body_text_scratch; /* see release_walk() */

/* One walk's state: its inputs, what it found so far, and where it is. */
typedef struct {
    PyObject *parser, *routes;
    const unsigned char *kinds;
    Py_ssize_t known;
    int read;
    unsigned heading_text_levels; /* bit n set: the texts of <hn> are read */
    lexbor_node *root, *body, *document;
    lexbor_node *hidden_root; /* the hidden element being walked through, if any */
    lexbor_node *body_root;   /* the body, while the walk is inside it */
    long element_count;
    long *tag_counts; /* by tag id, of the counted kinds */
    Capture captures[MAX_CAPTURES];
    int capture_depth;
    int reread, text_fragments;
    Found found;
    NameSet *names;
    Buffer body_text;
} Walk;

/* Start gathering the text of ``node`` into a new item of ``list``. Past MAX_CAPTURES nested
 * ones (hostile markup), lexbor's text_content is read instead, hidden text included, and
 * the caller is told to read the texts again once the hidden elements are gone. */
static int capture_text(Walk *walk, lexbor_node *node, PyObject *list) {
    if (walk->capture_depth == MAX_CAPTURES) {
        walk->reread = 1;
        return append_new(list, read_text(node, walk->document));
    }
    if (PyList_Append(list, empty_text) < 0) {
        return -1;
    }
    Capture *capture = &walk->captures[walk->capture_depth++];
    capture->node = node;
    capture->list = list;
    capture->index = PyList_GET_SIZE(list) - 1;
    capture->text.length = 0;
    return 0;
}

static int visit_element(Walk *walk, lexbor_node *node) {
    uintptr_t tag_id = FIELDS(node)->local_name;
    int kind = (Py_ssize_t)tag_id < walk->known ? walk->kinds[tag_id] : KIND_NONE;
    if (node == walk->body) {
        walk->body_root = node;
    }
    if (kind == KIND_HIDDEN) {
        if (walk->hidden_root == NULL) {
            walk->hidden_root = node; /* what it holds is not indexed (noscript's elements) */
        }
        return append_new(walk->found.hidden, new_node(node, walk->parser));
    }
    if (walk->hidden_root != NULL) {
        return 0;
    }
    walk->element_count++;
    if (node != walk->root && add_names(walk->names, node) < 0) {
        return -1;
    }
    if (kind == KIND_NONE) {
        return 0;
    }
    if (kind == KIND_LINK && walk->read) {
        return read_anchor(&walk->found, node) < 0
                   ? -1
                   : capture_text(walk, node, walk->found.anchor_texts);
    }
    if (kind == KIND_IMAGE && walk->read) {
        return read_image(&walk->found, node);
    }
    if (kind == KIND_COUNTED) {
        walk->tag_counts[tag_id]++;
        return 0;
    }
    if (kind > KIND_HEADING) {
        int level = kind - KIND_HEADING;
        if (append_new(walk->found.heading_levels, PyLong_FromLong(level)) < 0) {
            return -1;
        }
        return walk->heading_text_levels & (1 << level)
                   ? capture_text(walk, node, walk->found.heading_texts)
                   : PyList_Append(walk->found.heading_texts, Py_None);
    }
    PyObject *item = new_node(node, walk->parser);
    int status = item == NULL || index_node(walk->routes, tag_id, item) < 0 ? -1 : 0;
    Py_XDECREF(item);
    return status;
}

/* A text node of the body outside hidden elements: the body's text, as selectolax's
 * ``body.text(deep=True, separator=" ")`` gives it once the hidden elements are gone. */
static int visit_text(Walk *walk, lexbor_node *node) {
    if (walk->hidden_root != NULL) {
        return 0;
    }
    const LexborString *text = text_data(node);
    if (text->data == NULL) {
        return 0;
    }
    for (int depth = 0; depth < walk->capture_depth; depth++) {
        if (buffer_add(&walk->captures[depth].text, text->data, text->length) < 0) {
            return -1;
        }
    }
    if (walk->body_root == NULL) {
        return 0;
    }
    if (walk->text_fragments++ && buffer_add(&walk->body_text, " ", 1) < 0) {
        return -1;
    }
    return buffer_add(&walk->body_text, text->data, text->length);
}

/* Leaving ``node`` (its subtree done). */
static int leave(Walk *walk, lexbor_node *node) {
    if (node == walk->hidden_root) {
        walk->hidden_root = NULL;
    }
    if (node == walk->body_root) {
        walk->body_root = NULL;
    }
    if (walk->capture_depth > 0 && walk->captures[walk->capture_depth - 1].node == node) {
        Capture *capture = &walk->captures[--walk->capture_depth];
        PyObject *text = short_text((const lexbor_char *)capture->text.data, capture->text.length);
        if (text == NULL || PyList_SetItem(capture->list, capture->index, text) < 0) {
            return -1;
        }
    }
    return 0;
}

static int walk_tree(Walk *walk) {
    lexbor_node *root = walk->root, *node = root, *next;
    for (;;) {
        int type = FIELDS(node)->type;
        if ((type == ELEMENT_NODE && visit_element(walk, node) < 0) ||
            (type == TEXT_NODE && visit_text(walk, node) < 0)) {
            return -1;
        }
        next = FIELDS(node)->first_child;
        if (next != NULL) {
            node = next;
            continue;
        }
        while (node != root && (next = FIELDS(node)->next) == NULL) {
            if (leave(walk, node) < 0) {
                return -1;
            }
            node = FIELDS(node)->parent;
        }
        if (node == root) {
            return leave(walk, node);
        }
        if (leave(walk, node) < 0) {
            return -1;
        }
        node = next;
    }
}

static void release_walk(Walk *walk) {
    release(&walk->found);
    if (walk->names != NULL) {
        Py_XDECREF(walk->names->overflow);
        PyMem_Free(walk->names);
    }
    /* The body's text buffer is kept for the next walk: a page's text is up to megabytes,
     * and memory the process already holds costs no page faults to fill again. */
    body_text_scratch = walk->body_text;
    body_text_scratch.length = 0;
    PyMem_Free(walk->tag_counts);
    forget_texts();
    for (int depth = 0; depth < MAX_CAPTURES; depth++) {
        PyMem_Free(walk->captures[depth].text.data);
    }
}

/* {tag id: count} of the counted tags found. */
static PyObject *tag_counts(Walk *walk) {
    PyObject *counts = PyDict_New();
    for (Py_ssize_t tag_id = 0; counts != NULL && tag_id < walk->known; tag_id++) {
        if (walk->tag_counts[tag_id] == 0) {
            continue;
        }
        PyObject *key = PyLong_FromSsize_t(tag_id), *value = PyLong_FromLong(walk->tag_counts[tag_id]);
        if (key == NULL || value == NULL || PyDict_SetItem(counts, key, value) < 0) {
            Py_CLEAR(counts);
        }
        Py_XDECREF(key);
        Py_XDECREF(value);
    }
    return counts;
}

/* walk(root, body, parser, kinds, routes, read, heading_text_levels) -> (element_count,
 * tag_counts, heading_levels, heading_texts, hidden, reread, anchor_hrefs, anchor_rels,
 * anchor_texts, image_columns, image_srcs, attribute_names, body_text); see treewalk.py for
 * the contract. */
static PyObject *walk(PyObject *module, PyObject *args) {
    unsigned long long root_address, body_address;
    Py_buffer kinds;
    Walk walk = {0};
    if (new_node == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind() was not called");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "KKOy*O!pI", &root_address, &body_address, &walk.parser,
                          &kinds, &PyList_Type, &walk.routes, &walk.read,
                          &walk.heading_text_levels)) {
        return NULL;
    }
    walk.kinds = kinds.buf;
    walk.known = kinds.len;
    if (PyList_GET_SIZE(walk.routes) < walk.known) {
        PyBuffer_Release(&kinds);
        PyErr_SetString(PyExc_ValueError, "routes is shorter than kinds");
        return NULL;
    }
    walk.body_text = body_text_scratch;
    body_text_scratch = (Buffer){NULL, 0, 0}; /* the walk owns it until release_walk() */
    walk.root = (lexbor_node *)(uintptr_t)root_address;
    walk.body = (lexbor_node *)(uintptr_t)body_address;
    walk.document = walk.root;
    while (node_parent(walk.document) != NULL) {
        walk.document = node_parent(walk.document); /* texts go back to its arena */
    }
    Found *found = &walk.found;
    PyObject **lists[] = {&found->heading_levels, &found->heading_texts, &found->hidden,
                          &found->anchor_hrefs,   &found->anchor_rels,   &found->anchor_texts,
                          &found->image_srcs};
    int ready = 1;
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        ready = (*lists[i] = PyList_New(0)) != NULL && ready;
    }
    for (int column = 0; column < IMAGE_COLUMNS; column++) {
        ready = (found->image_columns[column] = PyList_New(0)) != NULL && ready;
    }
    walk.tag_counts = PyMem_Calloc((size_t)walk.known + 1, sizeof(long));
    walk.names = PyMem_Calloc(1, sizeof(NameSet));
    if (walk.names != NULL) {
        walk.names->overflow = PySet_New(NULL);
    }
    ready = ready && walk.names != NULL && walk.names->overflow != NULL && walk.tag_counts != NULL;
    int status = ready ? walk_tree(&walk) : (PyErr_NoMemory(), -1);
    PyBuffer_Release(&kinds);
    PyObject *counts = status < 0 ? NULL : tag_counts(&walk);
    PyObject *attribute_names = counts == NULL ? NULL : name_strings(walk.names);
    PyObject *body_text =
        attribute_names == NULL ? NULL
        : walk.body_text.length
            ? decode((const lexbor_char *)walk.body_text.data, walk.body_text.length)
            : Py_NewRef(empty_text);
    if (body_text == NULL) {
        Py_XDECREF(counts);
        Py_XDECREF(attribute_names);
        release_walk(&walk);
        return NULL;
    }
    PyObject **columns = found->image_columns;
    PyObject *image_columns = Py_BuildValue("(OOOOO)", columns[0], columns[1], columns[2],
                                            columns[3], columns[4]);
    if (image_columns == NULL) {
        Py_DECREF(counts);
        Py_DECREF(attribute_names);
        Py_DECREF(body_text);
        release_walk(&walk);
        return NULL;
    }
    PyObject *result = Py_BuildValue(
        "(lNOOOOOOONONN)", walk.element_count, counts, found->heading_levels,
        found->heading_texts, found->hidden, walk.reread ? Py_True : Py_False, found->anchor_hrefs,
        found->anchor_rels, found->anchor_texts, image_columns, found->image_srcs,
        attribute_names, body_text);
    release_walk(&walk);
    return result;
}

/* Whether each Latin-1 character is whitespace (str.isspace), for one-byte strings. */
static unsigned char latin1_space[256];

static inline int is_space(int kind, const void *data, Py_ssize_t i) {
    return kind == PyUnicode_1BYTE_KIND ? latin1_space[((const Py_UCS1 *)data)[i]]
                                        : Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i));
}

/* word_stats(text) -> (words, spaces): the length of ``text.split()`` and how many of its
 * characters are whitespace (str.isspace), without building the list of words. */
static PyObject *word_stats(PyObject *module, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "word_stats() takes a str");
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), words = 0, spaces = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    unsigned previous = 1; /* the text starts as if after a space */
    if (kind == PyUnicode_1BYTE_KIND) { /* most pages: a table, no branch per character */
        const Py_UCS1 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            unsigned space = latin1_space[chars[i]];
            spaces += space;
            words += previous & (space ^ 1);
            previous = space;
        }
    } else {
        for (Py_ssize_t i = 0; i < length; i++) {
            unsigned space = Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)) != 0;
            spaces += space;
            words += previous & (space ^ 1);
            previous = space;
        }
    }
    return Py_BuildValue("(nn)", words, spaces);
}

/* count_words(text, limit, keep) -> (counts, leading): how many times each of the first
 * ``limit`` whitespace-separated words occurs (a dict in first-seen order, as
 * ``Counter(text.split()[:limit])``) and the first ``keep`` words (``keep`` <= ``limit``);
 * each distinct word is made into a str once. */
typedef struct {
    Py_ssize_t start, length;
    Py_hash_t hash;
    PyObject *word;
} WordSlot;

static PyObject *count_words(PyObject *module, PyObject *args) {
    PyObject *text;
    Py_ssize_t limit, keep;
    if (!PyArg_ParseTuple(args, "Unn", &text, &limit, &keep)) {
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    size_t capacity = 1024;
    while (capacity < (size_t)limit * 2 && capacity < ((size_t)1 << 24)) {
        capacity *= 2;
    }
    WordSlot *slots = PyMem_Calloc(capacity, sizeof(WordSlot));
    PyObject *counts = PyDict_New(), *leading = PyList_New(0);
    Py_ssize_t *tally = PyMem_Calloc(capacity, sizeof(Py_ssize_t));
    size_t distinct = 0;
    if (slots == NULL || tally == NULL || counts == NULL || leading == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t i = 0, words = 0;
    while (words < limit) {
        while (i < length && is_space(kind, data, i)) {
            i++;
        }
        if (i >= length) {
            break;
        }
        Py_ssize_t start = i;
        Py_uhash_t hash = 1469598103934665603ULL;
        while (i < length && !is_space(kind, data, i)) {
            hash = (hash ^ PyUnicode_READ(kind, data, i)) * 1099511628211ULL;
            i++;
        }
        Py_ssize_t size = i - start;
        size_t slot = (size_t)hash & (capacity - 1);
        while (slots[slot].word != NULL &&
               !(slots[slot].hash == (Py_hash_t)hash && slots[slot].length == size &&
                 memcmp((const char *)data + slots[slot].start * kind,
                        (const char *)data + start * kind, (size_t)(size * kind)) == 0)) {
            slot = (slot + 1) & (capacity - 1);
        }
        if (slots[slot].word == NULL) {
            if (distinct * 2 >= capacity) {
                PyErr_SetString(PyExc_ValueError, "count_words: limit too large");
                goto fail;
            }
            PyObject *word = PyUnicode_Substring(text, start, i);
            if (word == NULL) {
                goto fail;
            }
            slots[slot] = (WordSlot){start, size, (Py_hash_t)hash, word};
            distinct++;
        }
        tally[slot]++;
        if (words < keep && PyList_Append(leading, slots[slot].word) < 0) {
            goto fail;
        }
        if (tally[slot] == 1 && PyDict_SetItem(counts, slots[slot].word, Py_None) < 0) {
            goto fail; /* first seen: keeps the dict's order; the count is set below */
        }
        words++;
    }
    for (size_t slot = 0; slot < capacity; slot++) {
        if (slots[slot].word != NULL) {
            PyObject *count = PyLong_FromSsize_t(tally[slot]);
            if (count == NULL || PyDict_SetItem(counts, slots[slot].word, count) < 0) {
                Py_XDECREF(count);
                goto fail;
            }
            Py_DECREF(count);
        }
    }
    for (size_t slot = 0; slot < capacity; slot++) {
        Py_XDECREF(slots[slot].word);
    }
    PyMem_Free(slots);
    PyMem_Free(tally);
    return Py_BuildValue("(NN)", counts, leading);
fail:
    if (slots != NULL) {
        for (size_t slot = 0; slot < capacity; slot++) {
            Py_XDECREF(slots[slot].word);
        }
    }
    PyMem_Free(slots);
    PyMem_Free(tally);
    Py_XDECREF(counts);
    Py_XDECREF(leading);
    return NULL;
}

/* count_netlocs(joined) -> {(netloc, slash): count} | None: for a one-byte str of hrefs
 * each after a NUL, what ``re.findall(r"\0(?:https?:)?//([^/\0]*)(/?)", joined, re.I | re.A)``
 * finds, counted (slash is "/" when one follows the netloc, else ""); None for a wider str. */
static int ascii_prefix_ci(const Py_UCS1 *text, Py_ssize_t length, const char *prefix) {
    Py_ssize_t size = (Py_ssize_t)strlen(prefix);
    if (length < size) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_UCS1 c = text[i];
        if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (Py_UCS1)prefix[i]) {
            return 0;
        }
    }
    return 1;
}

static PyObject *count_netlocs(PyObject *module, PyObject *joined) {
    if (!PyUnicode_Check(joined)) {
        PyErr_SetString(PyExc_TypeError, "count_netlocs() takes a str");
        return NULL;
    }
    if (PyUnicode_KIND(joined) != PyUnicode_1BYTE_KIND) {
        Py_RETURN_NONE;
    }
    const Py_UCS1 *text = PyUnicode_1BYTE_DATA(joined);
    Py_ssize_t length = PyUnicode_GET_LENGTH(joined);
    PyObject *counts = PyDict_New();
    const Py_UCS1 *end = text + length, *nul = memchr(text, 0, (size_t)length);
    while (counts != NULL && nul != NULL) {
        const Py_UCS1 *at = nul + 1;
        nul = at < end ? memchr(at, 0, (size_t)(end - at)) : NULL;
        if (ascii_prefix_ci(at, end - at, "https:")) {
            at += 6;
        } else if (ascii_prefix_ci(at, end - at, "http:")) {
            at += 5;
        }
        if (!ascii_prefix_ci(at, end - at, "//")) {
            continue;
        }
        const Py_UCS1 *host = at + 2, *stop = host;
        while (stop < end && *stop != '/' && *stop != 0) {
            stop++;
        }
        PyObject *key = Py_BuildValue("(Ns)", PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, host,
                                                                        stop - host),
                                      stop < end && *stop == '/' ? "/" : "");
        PyObject *count = key == NULL ? NULL : PyDict_GetItemWithError(counts, key);
        PyObject *next = key == NULL || (count == NULL && PyErr_Occurred())
                             ? NULL
                             : PyLong_FromLong(count == NULL ? 1 : PyLong_AsLong(count) + 1);
        if (next == NULL || PyDict_SetItem(counts, key, next) < 0) {
            Py_CLEAR(counts);
        }
        Py_XDECREF(key);
        Py_XDECREF(next);
    }
    return counts;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "Bind to selectolax's lexbor (its path, LexborNode's vtable)."},
    {"check_node_layout", check_node_layout, METH_O, "Check the fields the walk reads."},
    {"check_text_offset", check_text_offset, METH_VARARGS, "Check where text nodes keep text."},
    {"walk", walk, METH_VARARGS, "The element index of a tree in one walk."},
    {"count_netlocs", count_netlocs, METH_O, "Counts of the netlocs of NUL-joined hrefs."},
    {"count_words", count_words, METH_VARARGS, "Counts of the first words of a text."},
    {"word_stats", word_stats, METH_O, "(words, spaces) of a text, as str.split() sees them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_lexbor_walk", "One walk over a lexbor tree in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__lexbor_walk(void) {
    for (Py_UCS4 code = 0; code < 256; code++) {
        latin1_space[code] = Py_UNICODE_ISSPACE(code) != 0;
    }
    empty_text = PyUnicode_New(0, 0);
    if (empty_text == NULL) {
        return NULL;
    }
    return PyModule_Create(&definition);
}
